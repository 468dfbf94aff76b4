/**
 * The landing page at GET / (docs/API.md, "Home page"): what the service is and where to go,
 * server-rendered, no script. Its one stylesheet (the base every page shares, then its own rules)
 * is inline, allowed by its SHA-256 in the Content-Security-Policy (./plugin.ts), so the page is
 * one request and needs nothing else but the favicon. The same links, for a client that asks for
 * JSON, are `homeIndex`.
 */
import { readFileSync } from 'node:fs';
import { BASE_STYLESHEET, sha256Source } from '../common/page-chrome.js';
import { FAVICON_PATH, LOGO } from '../dashboard/brand.js';
import { html, type SafeHtml } from '../dashboard/html.js';
import { GRAPHQL_PATH } from './graphiql.js';

export const HOME_PATH = '/';

/** Where the page leads; GraphiQL only where it is served (outside production). */
export const HOME_LINKS = {
  docs: '/docs/',
  openapi: '/api/v1/openapi.json',
  dashboard: '/dashboard',
  record: '/record',
  publicPicksToday: '/api/public/picks/today',
  publicLedger: '/api/public/ledger',
  graphql: GRAPHQL_PATH,
} as const;

/**
 * CSS made compact for a page: comments out, runs of white space folded, none around braces,
 * semicolons, commas and `>` nor after a colon (this CSS has no strings where that would matter).
 */
function compactCss(css: string): string {
  return css
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\s+/g, ' ')
    .replace(/\s*([{};,>])\s*/g, '$1')
    .replace(/:\s+/g, ':')
    .replace(/;}/g, '}')
    .trim();
}

/**
 * The base every page shares, then the landing page's own rules (./assets/home.css), compact, as
 * one inline stylesheet: its text goes into the page as it is, hashed as it is.
 */
const STYLESHEET = compactCss(`${BASE_STYLESHEET.toString('utf8')}\n${readFileSync(new URL('./assets/home.css', import.meta.url), 'utf8')}`);

/** The stylesheet's hash, as the Content-Security-Policy's style-src names it. */
export const STYLESHEET_HASH = sha256Source(STYLESHEET);

const head = html`<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<meta name="referrer" content="same-origin">
<meta name="description" content="Value-bet picks priced against sharp bookmakers' fair odds: a tiered REST API with webhooks and streams, today's picks for anyone, and a public record with a verifiable ledger.">
<title>Picks API</title>
<link rel="icon" href="${FAVICON_PATH}" type="image/svg+xml">`;

interface Destination {
  id: string;
  title: string;
  href: string;
  text: SafeHtml;
}

function destinations(graphiql: boolean): Destination[] {
  const list: Destination[] = [
    {
      id: 'docs',
      title: 'API reference',
      href: HOME_LINKS.docs,
      text: html`The customer REST API under <code>/api/v1</code>: API keys in three tiers with hourly and monthly limits, picks, the track record, match analyses, signed webhooks and a live picks stream (SSE). Also as OpenAPI 3.1 at <code>${HOME_LINKS.openapi}</code>.`,
    },
    {
      id: 'dashboard',
      title: 'Dashboard',
      href: HOME_LINKS.dashboard,
      text: html`For customers: sign in, create and revoke API keys, follow usage against the tier's limits and the health of webhook deliveries.`,
    },
    {
      id: 'record',
      title: 'Track record',
      href: HOME_LINKS.record,
      text: html`Every settled pick at flat stakes: ROI and whether it could be luck, profit, closing-line value and calibration, and the public ledger anyone can verify.`,
    },
    {
      id: 'public-picks',
      title: "Today's picks",
      href: HOME_LINKS.publicPicksToday,
      text: html`Today's top picks as JSON, for anyone: no key, any origin (cached by CDNs for 5 minutes).`,
    },
  ];
  if (graphiql) {
    list.push({
      id: 'graphiql',
      title: 'GraphiQL',
      href: HOME_LINKS.graphql,
      text: html`The operators' GraphQL API in the browser: review, publish and settle picks, manage accounts and keys (with the admin token). Not served in production.`,
    });
  }
  return list;
}

export function homePage({ graphiql }: { graphiql: boolean }): string {
  // The stylesheet goes in as it is (a constant, hashed as it is): html`` would escape its quotes.
  return `<!doctype html><html lang="en">
<head>
${head.value}
<style>${STYLESHEET}</style>
</head>
${body(graphiql).value}
</html>`;
}

function body(graphiql: boolean): SafeHtml {
  return html`<body>
<header class="topbar">
  <div class="container topbar-inner"><a class="brand" href="${HOME_PATH}">${LOGO}<span>Picks API</span></a></div>
</header>
<main id="main" class="container">
  <h1>Sports-betting picks with a measurable edge</h1>
  <p class="lead">The service finds value bets. It removes the margin from sharp bookmakers' prices (devigging) to get each outcome's fair odds, and publishes a pick when a soft bookmaker pays more than fair after tax. Picks are settled automatically, and each is committed to a public ledger before kickoff, so the record can be checked rather than believed.</p>
  <p class="muted">Customers use the REST API with an API key; anyone can read today's picks and the record; operators work through the GraphQL API at <code>${GRAPHQL_PATH}</code>.</p>
  <ul class="destinations">
    ${destinations(graphiql).map(
      (destination) => html`<li class="destination" id="${destination.id}">
      <h2><a href="${destination.href}">${destination.title}</a></h2>
      <p>${destination.text}</p>
      <p class="path"><code>${destination.href}</code></p>
    </li>`,
    )}
  </ul>
</main>
<footer class="container">
  <p>For scripts, the same links as JSON: request <code>${HOME_PATH}</code> with <code>Accept: application/json</code>.</p>
</footer>
</body>`;
}

/**
 * GET / for a client that asks for JSON: the same places, named, as an API customer's script
 * would want them.
 */
export function homeIndex({ graphiql }: { graphiql: boolean }): Record<string, unknown> {
  return {
    service: 'Picks API',
    description: "Value-bet picks priced against sharp bookmakers' devigged odds: a tiered REST API with webhooks and streams, today's picks for anyone, a public record and a verifiable ledger, and a GraphQL API for operators.",
    links: {
      docs: HOME_LINKS.docs,
      openapi: HOME_LINKS.openapi,
      dashboard: HOME_LINKS.dashboard,
      record: HOME_LINKS.record,
      public_picks_today: HOME_LINKS.publicPicksToday,
      public_ledger: HOME_LINKS.publicLedger,
      graphql: HOME_LINKS.graphql,
      ...(graphiql ? { graphiql: HOME_LINKS.graphql } : {}),
    },
  };
}
