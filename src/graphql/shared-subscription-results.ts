/**
 * Subscription fan-out without re-executing the same thing thousands of times.
 *
 * graphql-js executes a subscription's selection once per event per subscriber. For a feed
 * with 10,000 stream clients that is 10,000 identical executions of every pick, and the
 * fan-out blocks the event loop for seconds. Every subscriber on an instance receives the same
 * event object from the PickFeed, so the result is memoised per event object, keyed by:
 *   - the document and operation,
 *   - the values of the variables used below the root field (arguments of the root field,
 *     such as afterSequence, only choose the events and cannot change an event's result),
 *   - the caller's access level (admin, or API key tier), so tier-dependent fields and
 *     errors are never shared across tiers.
 * Resolvers below a subscription root must therefore not depend on who is asking beyond
 * that access level (true of every type in this schema; API key identity never changes
 * what a pick looks like).
 *
 * The subscribe step itself (root field `subscribe`, where scope-auth checks tier and
 * where replay happens) still runs once per subscriber, as does every yoga/envelop hook.
 */
import {
  createSourceEventStream,
  execute,
  getOperationAST,
  Kind,
  visit,
  type ASTNode,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
} from 'graphql';
import { isAsyncIterable, mapAsyncIterator, type Plugin } from 'graphql-yoga';
import { accessLevelOf } from '../domain/principal.js';
import type { Context } from './context.js';

function accessLevel(context: Partial<Context> | undefined): string {
  return context?.principal ? accessLevelOf(context.principal) : 'none';
}

/** Names of the variables that can influence the execution of one event. */
function variablesBelowRoot(document: DocumentNode, operationName: string | null | undefined): string[] {
  const operation = getOperationAST(document, operationName);
  const names = new Set<string>();
  const collect = (node: ASTNode) =>
    visit(node, {
      Variable(variable) {
        names.add(variable.name.value);
      },
    });
  for (const selection of operation?.selectionSet.selections ?? []) {
    if (selection.kind === Kind.FIELD) {
      for (const directive of selection.directives ?? []) collect(directive);
      if (selection.selectionSet) collect(selection.selectionSet);
    } else {
      collect(selection); // fragments at the root: count everything (conservative)
    }
  }
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) collect(definition);
  return [...names].sort();
}

export function useSharedSubscriptionResults(): Plugin {
  const documentIds = new WeakMap<DocumentNode, Map<string, { id: number; variables: string[] }>>();
  let nextDocumentId = 0;
  const resultsByEvent = new WeakMap<object, Map<string, Promise<ExecutionResult> | ExecutionResult>>();

  function shareKey(args: ExecutionArgs): string {
    let perOperation = documentIds.get(args.document);
    if (!perOperation) {
      perOperation = new Map();
      documentIds.set(args.document, perOperation);
    }
    const operationName = args.operationName ?? '';
    let entry = perOperation.get(operationName);
    if (!entry) {
      entry = { id: (nextDocumentId += 1), variables: variablesBelowRoot(args.document, args.operationName) };
      perOperation.set(operationName, entry);
    }
    const values = entry.variables.map((name) => args.variableValues?.[name] ?? null);
    return `${entry.id}\u0000${accessLevel(args.contextValue as Partial<Context>)}\u0000${JSON.stringify(values)}`;
  }

  return {
    onSubscribe({ setSubscribeFn }) {
      setSubscribeFn(async (args: ExecutionArgs) => {
        const source = await createSourceEventStream(args);
        if (!isAsyncIterable(source)) return source as ExecutionResult;
        const key = shareKey(args);
        return mapAsyncIterator(source as AsyncIterableIterator<unknown>, (payload) => {
          if (typeof payload !== 'object' || payload === null) return execute({ ...args, rootValue: payload });
          let results = resultsByEvent.get(payload);
          if (!results) {
            results = new Map();
            resultsByEvent.set(payload, results);
          }
          let result = results.get(key);
          if (result === undefined) {
            result = execute({ ...args, rootValue: payload });
            results.set(key, result);
          }
          return result;
        });
      });
    },
  };
}
