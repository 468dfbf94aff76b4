/**
 * The landing page at GET / (docs/API.md, "Home page"): what the service is and where to go,
 * server-rendered, no script. Its one stylesheet is inline, allowed by its SHA-256 in the
 * Content-Security-Policy (./plugin.ts), so the page is one request and needs nothing else but
 * the favicon. The same links, for a client that asks for JSON, are `homeIndex`.
 */
import { createHash } from 'node:crypto';
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

const STYLESHEET = `
:root{--font:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans","Liberation Sans",sans-serif;--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono","DejaVu Sans Mono",monospace;--bg:#f4f6fb;--surface:#fff;--text:#0f172a;--muted:#526075;--border:#dde3ee;--primary:#4338ca;--primary-hover:#3730a3;--focus:#2563eb}
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:15px/1.55 var(--font);color:var(--text);background:var(--bg)}
a{color:var(--primary)}
a:hover{color:var(--primary-hover)}
a:focus-visible{outline:3px solid var(--focus);outline-offset:2px;border-radius:4px}
code{font-family:var(--mono);font-size:.88em;background:#f1f4f9;border:1px solid #e3e8f0;border-radius:5px;padding:.05em .35em;overflow-wrap:anywhere}
.container{max-width:960px;margin:0 auto;padding:0 20px}
.topbar{background:var(--surface);border-bottom:1px solid var(--border)}
.topbar .container{display:flex;align-items:center;min-height:60px}
.brand{display:inline-flex;align-items:center;gap:10px;font-weight:700;font-size:1.05rem;color:var(--text);text-decoration:none}
.logo{width:28px;height:28px;color:var(--primary)}
main.container{padding-top:36px;padding-bottom:16px}
h1{font-size:1.9rem;line-height:1.25;margin:0 0 12px;letter-spacing:-.01em}
.lead{font-size:1.05rem;max-width:70ch;margin:0 0 12px}
.muted{color:var(--muted);max-width:70ch;margin:0 0 28px}
.destinations{list-style:none;margin:0;padding:0;display:grid;gap:16px;grid-template-columns:repeat(auto-fill,minmax(270px,1fr))}
.destination{background:var(--surface);border:1px solid var(--border);border-radius:12px;padding:18px 20px;box-shadow:0 1px 2px rgba(15,23,42,.06),0 1px 3px rgba(15,23,42,.08)}
.destination h2{font-size:1.1rem;margin:0 0 6px}
.destination p{margin:0 0 10px}
.destination .path{margin:0;color:var(--muted);font-size:.9rem}
footer.container{padding-top:12px;padding-bottom:36px;color:var(--muted);font-size:.9rem}
@media (max-width:600px){main.container{padding-top:24px}h1{font-size:1.5rem}}
`;

/** The stylesheet's hash, as the Content-Security-Policy's style-src names it. */
export const STYLESHEET_HASH = `'sha256-${createHash('sha256').update(STYLESHEET).digest('base64')}'`;

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
  <div class="container"><a class="brand" href="${HOME_PATH}">${LOGO}<span>Picks API</span></a></div>
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
