/**
 * The page's third feed: Apollo Client over GraphQL over WebSocket (`/graphql/ws`, graphql-ws's
 * protocol), as a frontend built with a bundler writes it. The example's backend bundles this
 * file for the browser; in your own app, import it as any module.
 */
import { ApolloClient, InMemoryCache, gql } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { createClient } from 'graphql-ws';

const PICK_PUBLISHED = gql`
  subscription LivePicks {
    pickPublished {
      sequence
      pick { id pick homeTeam awayTeam }
    }
  }
`;

/** What a close code means to a reader of the page (docs/API.md, "GraphQL over WebSocket"). */
const REFUSALS = {
  4400: 'the page sent something the protocol does not allow',
  4401: 'the stream token is expired, revoked or not a token',
  4403: 'the stream token is not for this page\'s origin',
  4429: 'too many streams or requests; try again later',
};

/**
 * Subscribes to published picks with a stream token; returns a function that stops.
 * @param {{ api: string, token: string, onPick: (pick: object) => void, onStatus: (text: string, refused?: boolean) => void }} options
 */
export function subscribeWithApollo({ api, token, onPick, onStatus }) {
  // Apollo completes the subscription after a refusal; the refusal is what the reader needs.
  let refusal = null;
  const wsClient = createClient({
    url: `${api.replace(/^http/, 'ws')}/graphql/ws`,
    // A browser cannot set headers on a WebSocket: the token goes in connection_init.
    connectionParams: { authorization: `Bearer ${token}` },
    // A refusal (4400 to 4499) will not change on a retry with the same token; a dropped
    // connection (1006, a restart) is retried, and afterSequence would resume it.
    shouldRetry: (event) => !(event && typeof event.code === 'number' && event.code >= 4400 && event.code < 4500),
    on: {
      connected: () => onStatus('live'),
      closed: (event) => {
        const code = event && typeof event.code === 'number' ? event.code : 0;
        if (code >= 4400 && code < 4500) {
          refusal = `refused (${code}): ${REFUSALS[code] ?? event.reason}`;
          onStatus(refusal, true);
        }
      },
    },
  });
  const client = new ApolloClient({ link: new GraphQLWsLink(wsClient), cache: new InMemoryCache() });
  const subscription = client.subscribe({ query: PICK_PUBLISHED }).subscribe({
    next: ({ data, error }) => {
      if (data) onPick(data.pickPublished.pick);
      if (error && !refusal) onStatus(`refused: ${error.message}`, true);
    },
    error: (error) => onStatus(refusal ?? `refused: ${error.message}`, true),
    complete: () => {
      if (!refusal) onStatus('ended: the stream token expired; reload to mint a new one');
    },
  });
  return () => {
    subscription.unsubscribe();
    void wsClient.dispose();
  };
}
