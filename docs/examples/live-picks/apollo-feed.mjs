/**
 * The page's third feed: Apollo Client over GraphQL over WebSocket (`/graphql/ws`, graphql-ws's
 * protocol), as a frontend built with a bundler writes it. The example's backend bundles this
 * file for the browser; in your own app, import it as any module.
 */
import { ApolloClient, InMemoryCache, gql } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { createClient } from 'graphql-ws';

const PICK_PUBLISHED = gql`
  subscription LivePicks($afterSequence: String) {
    pickPublished(afterSequence: $afterSequence) {
      sequence
      pick { id pick homeTeam awayTeam }
    }
  }
`;

/**
 * The close codes that refuse this caller (docs/API.md, "GraphQL over WebSocket"): retrying with
 * the same token gets the same answer. Any other close (1006 a dropped connection or a restart,
 * 4408 a late connection_init) is retried.
 */
const REFUSALS = {
  4400: 'the page sent something the protocol does not allow',
  4401: 'the stream token is expired, revoked or not a token',
  4403: 'the stream token is not for this page\'s origin',
  4429: 'too many streams or requests; try again later',
};
const isRefusal = (event) => Boolean(event && typeof event.code === 'number' && event.code in REFUSALS);

/**
 * Subscribes to published picks with a stream token, resuming after the last pick seen when the
 * connection comes back; returns a function that stops.
 * @param {{ api: string, token: string, onPick: (pick: object) => void, onStatus: (text: string, refused?: boolean) => void }} options
 */
export function subscribeWithApollo({ api, token, onPick, onStatus }) {
  // The last event's sequence: a resubscription asks for what came after it (up to 24 h).
  let lastSequence = null;
  // Set once the feed cannot go on; what the reader needs to see stays on the page.
  let ended = false;
  const end = (text, refused) => {
    ended = true;
    onStatus(text, refused);
  };
  const wsClient = createClient({
    url: `${api.replace(/^http/, 'ws')}/graphql/ws`,
    // A browser cannot set headers on a WebSocket: the token goes in connection_init.
    connectionParams: { authorization: `Bearer ${token}` },
    // graphql-ws gives up by itself on 4400, 4401 and 4429, but retries 4403.
    shouldRetry: (event) => !isRefusal(event),
    retryAttempts: Infinity,
    on: {
      connected: (_socket, _payload, wasRetry) => {
        if (ended) return;
        onStatus('live');
        // graphql-ws resends the first subscribe message as it was; picks published while the
        // connection was down come with a subscription that names the last one seen (before the
        // first pick there is no position to resume from).
        if (wasRetry && lastSequence !== null) subscribe();
      },
      closed: (event) => {
        if (ended) return;
        if (isRefusal(event)) end(`refused (${event.code}): ${REFUSALS[event.code]}`, true);
        else onStatus('reconnecting…');
      },
    },
  });
  const client = new ApolloClient({ link: new GraphQLWsLink(wsClient), cache: new InMemoryCache() });

  let subscription = null;
  function subscribe() {
    subscription?.unsubscribe();
    // Apollo Client 4 delivers an error as a result with `error`, then completes.
    subscription = client.subscribe({ query: PICK_PUBLISHED, variables: { afterSequence: lastSequence } }).subscribe({
      next: ({ data, error }) => {
        if (data) {
          lastSequence = data.pickPublished.sequence;
          onPick(data.pickPublished.pick);
        }
        if (error && !ended) end(`refused: ${error.message}`, true);
      },
      complete: () => {
        if (!ended) end('ended: the stream token expired; reload to mint a new one');
      },
    });
  }
  subscribe();
  return () => {
    ended = true;
    subscription?.unsubscribe();
    void wsClient.dispose();
  };
}
