/**
 * The dashboard's pages, rendered on the server. Every value from the database or the request
 * goes through html`` (escaped). Styles and the one script are files served by the app
 * (assets/), so the Content-Security-Policy can forbid anything inline.
 */
import type { DashboardPageQuery, MyApiKeyQuery, Tier } from '../common/generated/graphql.js';
import { BASE_STYLESHEET_PATH, FAVICON_PATH, LOGO } from './brand.js';
import { html, type SafeHtml } from './html.js';

export const ASSET_PATH = '/dashboard/assets';

/** What the pages show is what their documents select (adapters/common/generated/graphql.ts). */
export type KeyView = DashboardPageQuery['myApiKeys'][number];
type SubscriptionView = KeyView['webhookSubscriptions'][number];
type DeliveryView = SubscriptionView['deliveries']['nodes'][number];
/** The signed-in account as every page's header shows it. */
export type AccountView = Pick<DashboardPageQuery['me'], 'email' | 'tier'>;
/** The key the revoke confirmation names. */
export type KeyToRevoke = MyApiKeyQuery['myApiKey'];

export interface Layout {
  title: string;
  csrfToken: string;
  /** Present when signed in: the header shows the account and a sign-out button. */
  account?: AccountView;
  /** Narrow centred layout (sign-in, confirmations, errors). */
  narrow?: boolean;
}

const numberFormat = new Intl.NumberFormat('en-US');
const dateFormat = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
const dateTimeFormat = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hour12: false,
  timeZone: 'UTC',
});

export function formatNumber(value: number): string {
  return numberFormat.format(value);
}

function tierName(tier: Tier): string {
  return tier.charAt(0) + tier.slice(1).toLowerCase();
}

function time(iso: string, text: string): SafeHtml {
  return html`<time datetime="${iso}" title="${dateTimeFormat.format(new Date(iso))} UTC">${text}</time>`;
}

/** "just now", "5 min ago", "3 h ago", "2 days ago", then the date. */
export function relativeTime(iso: string, now: Date): string {
  const seconds = Math.max(0, Math.round((now.getTime() - new Date(iso).getTime()) / 1000));
  if (seconds < 45) return 'just now';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  if (days < 14) return `${days} day${days === 1 ? '' : 's'} ago`;
  return dateFormat.format(new Date(iso));
}

function untilText(iso: string, now: Date): string {
  const seconds = Math.max(0, Math.round((new Date(iso).getTime() - now.getTime()) / 1000));
  if (seconds < 90) return 'in about a minute';
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `in ${minutes} min`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `in ${hours} h`;
  return `on ${dateFormat.format(new Date(iso))}`;
}

export function csrfField(token: string): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

export function layout(options: Layout, body: SafeHtml): string {
  const signedIn = options.account
    ? html`<div class="account-menu">
        <span class="account-email" title="Signed in as ${options.account.email}">${options.account.email}</span>
        <form method="post" action="/dashboard/logout">${csrfField(options.csrfToken)}<button type="submit" class="btn btn-ghost btn-sm">Sign out</button></form>
      </div>`
    : null;
  return `<!doctype html>${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<meta name="referrer" content="same-origin">
<title>${options.title} · Picks API</title>
<link rel="icon" href="${FAVICON_PATH}" type="image/svg+xml">
<link rel="stylesheet" href="${BASE_STYLESHEET_PATH}">
<link rel="stylesheet" href="${ASSET_PATH}/dashboard.css">
<script src="${ASSET_PATH}/dashboard.js" defer></script>
</head>
<body class="${options.narrow ? 'page-narrow' : 'page-wide'}">
<a class="skip-link" href="#main">Skip to content</a>
<header class="topbar">
  <div class="container topbar-inner">
    <a class="brand" href="/dashboard/api-keys">${LOGO}<span>Picks API</span><span class="brand-sub">Dashboard</span></a>
    ${signedIn}
  </div>
</header>
<main id="main" class="container" tabindex="-1">
${body}
</main>
<footer class="footer container">
  <p>Picks API · Requests to <code>/api/v1</code> authenticate with <code>Authorization: Bearer &lt;key&gt;</code>. Times are UTC. <a href="/docs/">API reference</a> · <a href="/record">Track record</a></p>
</footer>
</body>
</html>`.value}`;
}

export function loginPage(options: { csrfToken: string; email?: string; error?: string; notice?: string }): string {
  const alert = options.error
    ? html`<div class="alert alert-error" role="alert" id="login-error"><strong>Sign-in failed.</strong> ${options.error}</div>`
    : options.notice
      ? html`<div class="alert alert-info" role="status">${options.notice}</div>`
      : null;
  return layout(
    { title: 'Sign in', csrfToken: options.csrfToken, narrow: true },
    html`<section class="card auth-card" aria-labelledby="signin-heading">
  <h1 id="signin-heading">Sign in</h1>
  <p class="lead">Manage your API keys, usage and webhooks.</p>
  ${alert}
  <form method="post" action="/dashboard/login" class="stack" novalidate>
    ${csrfField(options.csrfToken)}
    <div class="field">
      <label for="email">Email</label>
      <input id="email" name="email" type="email" autocomplete="username" required autofocus value="${options.email ?? ''}"${options.error ? html` aria-describedby="login-error"` : null}>
    </div>
    <div class="field">
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required>
    </div>
    <button type="submit" class="btn btn-primary btn-block">Sign in</button>
  </form>
  <p class="muted small">Accounts are set up by the Picks API team. Ask your account manager if you need access.</p>
</section>`,
  );
}

function usageMeter(label: string, used: number, limit: number, detail: string): SafeHtml {
  const ratio = limit > 0 ? used / limit : 0;
  const level = ratio >= 0.95 ? 'critical' : ratio >= 0.8 ? 'warning' : 'ok';
  return html`<div class="usage usage-${level}">
    <div class="usage-numbers"><span class="usage-used">${formatNumber(used)}</span><span class="usage-limit"> / ${formatNumber(limit)}</span></div>
    <meter min="0" max="${limit}" low="${Math.floor(limit * 0.8)}" high="${Math.floor(limit * 0.95)}" optimum="0" value="${Math.min(used, limit)}" aria-label="${label}: ${formatNumber(used)} of ${formatNumber(limit)} requests">${formatNumber(used)} of ${formatNumber(limit)}</meter>
    <div class="usage-detail">${detail}</div>
  </div>`;
}

function keyName(key: Pick<KeyView, 'label' | 'prefix'>): SafeHtml {
  return key.label ? html`<span class="key-label">${key.label}</span>` : html`<span class="key-label key-label-none">Untitled key</span>`;
}

function keyRow(key: KeyView, now: Date): SafeHtml {
  const usage = key.usage;
  const status = key.active
    ? html`<span class="pill pill-active"><span class="dot" aria-hidden="true"></span>Active</span>`
    : html`<span class="pill pill-revoked"><span class="dot" aria-hidden="true"></span>Revoked</span>${key.revokedAt ? html`<span class="cell-sub">${time(key.revokedAt, relativeTime(key.revokedAt, now))}</span>` : null}`;
  return html`<tr class="${key.active ? 'key-active' : 'key-revoked'}" id="key-${key.id}">
    <th scope="row" data-label="Key">${keyName(key)}<code class="key-prefix" title="First characters of the key">${key.prefix}…</code></th>
    <td data-label="Tier"><span class="badge tier-${key.tier.toLowerCase()}">${tierName(key.tier)}</span></td>
    <td data-label="Created">${time(key.createdAt, dateFormat.format(new Date(key.createdAt)))}</td>
    <td data-label="Last used">${key.lastUsedAt ? time(key.lastUsedAt, relativeTime(key.lastUsedAt, now)) : html`<span class="muted">Never</span>`}</td>
    <td data-label="This month">${usageMeter('Requests this month', usage.monthly.used, usage.monthly.limit, `Resets ${untilText(usage.monthly.resetsAt, now)}`)}</td>
    <td data-label="Last hour">${usageMeter('Requests in the last hour', usage.hourly.used, usage.hourly.limit, usage.hourly.used >= usage.hourly.limit * 0.8 ? `Frees up ${untilText(usage.hourly.resetsAt, now)}` : 'Rolling 60 minutes')}</td>
    <td data-label="Status">${status}</td>
    <td class="cell-actions">${key.active ? html`<a class="btn btn-danger-outline btn-sm" href="/dashboard/api-keys/${key.id}/revoke" aria-label="Revoke ${key.label ?? 'untitled key'} (${key.prefix}…)">Revoke</a>` : null}</td>
  </tr>`;
}

/** GraphQL's PICK_PUBLISHED is pick.published everywhere customers look (REST, delivery headers). */
export function eventName(value: string): string {
  return value.toLowerCase().replace('_', '.');
}

function deliveryItem(delivery: DeliveryView, now: Date): SafeHtml {
  const outcome =
    delivery.status === 'SUCCEEDED'
      ? { css: 'ok', text: 'Delivered' }
      : delivery.status === 'PENDING'
        ? { css: 'pending', text: delivery.attemptCount === 0 ? 'Queued' : 'Retrying' }
        : delivery.status === 'CANCELLED'
          ? { css: 'muted', text: 'Cancelled' }
          : { css: 'failed', text: 'Failed' };
  const detail = [
    delivery.lastStatusCode !== null ? `HTTP ${delivery.lastStatusCode}` : delivery.lastError ? delivery.lastError.replace(/_/g, ' ') : null,
    `${delivery.attemptCount} attempt${delivery.attemptCount === 1 ? '' : 's'}`,
    delivery.status === 'PENDING' && delivery.nextAttemptAt ? `next ${untilText(delivery.nextAttemptAt, now)}` : null,
  ].filter(Boolean);
  return html`<li class="delivery delivery-${outcome.css}">
    <span class="dot" aria-hidden="true"></span>
    <span class="delivery-main"><span class="delivery-status">${outcome.text}</span> <code>${eventName(delivery.eventType)}</code></span>
    <span class="delivery-meta">${detail.join(' · ')} · ${time(delivery.createdAt, relativeTime(delivery.createdAt, now))}</span>
  </li>`;
}

function subscriptionBlock(subscription: SubscriptionView, keyActive: boolean, now: Date, csrfToken: string): SafeHtml {
  const deliveries = subscription.deliveries.nodes;
  const status = !keyActive
    ? html`<span class="pill pill-stopped"><span class="dot" aria-hidden="true"></span>Stopped: key revoked</span>`
    : subscription.status === 'ACTIVE'
      ? html`<span class="pill pill-active"><span class="dot" aria-hidden="true"></span>Active</span>`
      : html`<span class="pill pill-exhausted"><span class="dot" aria-hidden="true"></span>Exhausted</span>`;
  const action = (path: string, text: string, css = 'btn-secondary') =>
    html`<form method="post" action="/dashboard/webhooks/${subscription.id}/${path}">${csrfField(csrfToken)}<button type="submit" class="btn ${css} btn-sm" aria-label="${text}: ${subscription.url}">${text}</button></form>`;
  const actions = keyActive
    ? html`<div class="button-row subscription-actions">
        ${subscription.status === 'EXHAUSTED' ? action('reactivate', 'Reactivate', 'btn-primary') : null}
        ${action('test', 'Send test')}
        ${action('rotate-secret', 'Rotate secret')}
        <a class="btn btn-danger-outline btn-sm" href="/dashboard/webhooks/${subscription.id}/delete" aria-label="Delete: ${subscription.url}">Delete</a>
      </div>`
    : html`<div class="button-row subscription-actions"><a class="btn btn-danger-outline btn-sm" href="/dashboard/webhooks/${subscription.id}/delete" aria-label="Delete: ${subscription.url}">Delete</a></div>`;
  return html`<li class="subscription" id="webhook-${subscription.id}">
    <div class="subscription-head">
      <code class="subscription-url">${subscription.url}</code>
      ${status}
    </div>
    <div class="subscription-events">${subscription.events.map((event) => html`<span class="tag">${eventName(event)}</span>`)}</div>
    ${keyActive && subscription.status === 'EXHAUSTED'
      ? html`<p class="small warning-text">Deliveries stopped after the last retry failed. Fix the endpoint, send a test, then reactivate it: new events are delivered again (failed ones can be queued again with <code>POST /api/v1/webhooks/${subscription.id}/replay</code>).</p>`
      : null}
    ${actions}
    <h4 class="small-heading">Latest deliveries</h4>
    ${deliveries.length === 0 ? html`<p class="muted small">No deliveries yet: the next published or settled pick is sent here.</p>` : html`<ul class="deliveries">${deliveries.map((delivery) => deliveryItem(delivery, now))}</ul>`}
  </li>`;
}

/** What the add-endpoint form shows again after a refusal (the typed url, the chosen key and events). */
export interface WebhookFormState {
  error?: string;
  url?: string;
  apiKeyId?: string;
  events?: readonly string[];
}

const EVENT_CHOICES = [
  { value: 'PICK_PUBLISHED', hint: 'a pick is published' },
  { value: 'PICK_SETTLED', hint: 'a pick is settled (won, lost, void)' },
  { value: 'PICK_AVAILABILITY_CHANGED', hint: "a published pick's price can be bet at value again, or no longer (available, moved, gone)" },
] as const;

function createWebhookForm(keys: KeyView[], csrfToken: string, form: WebhookFormState, localReceivers: boolean): SafeHtml {
  const active = keys.filter((key) => key.active);
  if (active.length === 0) return html`<p class="muted small">Create an API key first: every webhook endpoint belongs to one of your keys.</p>`;
  const chosen = form.events ?? ['PICK_PUBLISHED'];
  return html`<form method="post" action="/dashboard/webhooks" class="stack webhook-form" aria-labelledby="add-webhook-heading">
    <h3 id="add-webhook-heading" class="webhook-key-title">Add an endpoint</h3>
    ${csrfField(csrfToken)}
    ${form.error ? html`<div class="alert alert-error" role="alert" id="webhook-error">${form.error}</div>` : null}
    <div class="field">
      <label for="webhook-url">Endpoint URL</label>
      <input id="webhook-url" name="url" type="url" inputmode="url" required maxlength="2048" placeholder="https://example.com/hooks/picks" autocomplete="off" value="${form.url ?? ''}" aria-describedby="webhook-url-hint${form.error ? ' webhook-error' : ''}">
      <span class="small muted" id="webhook-url-hint">HTTPS, on a publicly reachable host.${
        localReceivers ? html` In this local demo, a receiver on this machine works too: <code>http://127.0.0.1:4000/webhooks</code> (127.0.0.1, [::1] or localhost).` : null
      }</span>
    </div>
    <div class="field">
      <label for="webhook-key">API key</label>
      <select id="webhook-key" name="apiKeyId">${active.map((key) => html`<option value="${key.id}"${key.id === form.apiKeyId ? html` selected` : null}>${key.label ?? 'Untitled key'} (${key.prefix}…)</option>`)}</select>
    </div>
    <fieldset class="field event-choices">
      <legend>Events</legend>
      ${EVENT_CHOICES.map(
        (choice) => html`<label class="checkbox"><input type="checkbox" name="events" value="${choice.value}"${chosen.includes(choice.value) ? html` checked` : null}> <code>${eventName(choice.value)}</code> <span class="muted small">${choice.hint}</span></label>`,
      )}
    </fieldset>
    <div><button type="submit" class="btn btn-primary">Add endpoint</button></div>
    <p class="small muted">At most 5 endpoints per key. The signing secret is shown once, right after you add the endpoint.</p>
  </form>`;
}

function webhooksSection(account: AccountView, keys: KeyView[], now: Date, csrfToken: string, form: WebhookFormState, localReceivers: boolean): SafeHtml {
  const intro = html`<div class="card-head"><h2 id="webhooks-heading">Webhooks</h2></div>`;
  if (account.tier === 'STARTER') {
    return html`<section class="card" aria-labelledby="webhooks-heading">${intro}
      <div class="empty"><p><strong>Webhooks are part of the Growth and Enterprise plans.</strong></p><p class="muted">They push every published and settled pick to your HTTPS endpoint, signed with HMAC-SHA256. Ask your account manager to upgrade.</p></div>
    </section>`;
  }
  const withSubscriptions = keys.filter((key) => key.webhookSubscriptions.length > 0);
  const list =
    withSubscriptions.length === 0
      ? html`<div class="empty"><p><strong>No webhook endpoints yet.</strong></p><p class="muted">Add one below (or with <code>POST /api/v1/webhooks</code>); its status and latest deliveries appear here.</p></div>`
      : withSubscriptions.map(
          (key) => html`<div class="webhook-key">
            <h3 class="webhook-key-title">${keyName(key)} <code class="key-prefix">${key.prefix}…</code></h3>
            <ul class="subscriptions">${key.webhookSubscriptions.map((subscription) => subscriptionBlock(subscription, key.active, now, csrfToken))}</ul>
          </div>`,
        );
  return html`<section class="card" aria-labelledby="webhooks-heading">${intro}${list}${createWebhookForm(keys, csrfToken, form, localReceivers)}</section>`;
}

export interface KeysPageOptions {
  csrfToken: string;
  account: AccountView;
  keys: KeyView[];
  now: Date;
  baseUrl: string;
  limits: { hourly: number; monthly: number };
  /** The key just created: shown once. */
  created?: { key: string; apiKey: Pick<KeyView, 'label' | 'prefix'> };
  revoked?: Pick<KeyView, 'label' | 'prefix'>;
  error?: string;
  label?: string;
  /** A success notice (e.g. after deleting a webhook endpoint). */
  notice?: string;
  webhookForm?: WebhookFormState;
  /** The embedded demo: endpoints on this machine's loopback are accepted, and the form says so. */
  localWebhookReceivers?: boolean;
}

export function keysPage(options: KeysPageOptions): string {
  const { account, keys, now } = options;
  const active = keys.filter((key) => key.active).length;
  const revoked = keys.length - active;
  const created = options.created
    ? html`<section class="card new-key" aria-labelledby="new-key-heading">
        <h2 id="new-key-heading">Your new API key${options.created.apiKey.label ? html`: ${options.created.apiKey.label}` : null}</h2>
        <p class="new-key-warning"><svg class="icon" viewBox="0 0 20 20" aria-hidden="true" focusable="false"><path fill="currentColor" d="M10 1.5l9 16H1l9-16zm-1 6v5h2v-5H9zm0 6.5v2h2v-2H9z"/></svg><span><strong>Copy this key now.</strong> It will not be shown again: we keep only a hash of it.</span></p>
        <div class="key-reveal">
          <label for="new-key-value" class="visually-hidden">New API key</label>
          <textarea id="new-key-value" class="mono" rows="2" readonly spellcheck="false" autocomplete="off">${options.created.key}</textarea>
          <button type="button" class="btn btn-primary" data-copy-target="new-key-value" hidden>Copy</button>
        </div>
        <p class="copy-status small" role="status" aria-live="polite"></p>
        <p class="small muted">Try it: <code class="snippet">curl -H "Authorization: Bearer ${options.created.key}" '${options.baseUrl}/api/v1/picks?limit=1'</code></p>
      </section>`
    : null;
  const revokedNotice = options.revoked
    ? html`<div class="alert alert-success" role="status"><strong>Key revoked.</strong> “${options.revoked.label ?? 'Untitled key'}” (${options.revoked.prefix}…) no longer works; requests with it get <code>401 invalid_api_key</code>.</div>`
    : null;
  const errorNotice = options.error ? html`<div class="alert alert-error" role="alert">${options.error}</div>` : null;
  const notice = options.notice ? html`<div class="alert alert-success" role="status">${options.notice}</div>` : null;
  const table =
    keys.length === 0
      ? html`<div class="empty"><p><strong>No API keys yet.</strong></p><p class="muted">Create your first key below to start calling the API.</p></div>`
      : html`<div class="table-wrap"><table class="keys-table">
          <caption class="visually-hidden">Your API keys with usage and status</caption>
          <thead><tr><th scope="col">Key</th><th scope="col">Tier</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">This month</th><th scope="col">Last hour</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>${keys.map((key) => keyRow(key, now))}</tbody>
        </table></div>`;
  return layout(
    { title: 'API keys', csrfToken: options.csrfToken, account },
    html`<div class="page-head">
  <div>
    <h1>API keys</h1>
    <p class="lead">Keys authenticate your requests to the Picks API. Each key has its own hourly limit and monthly cap.</p>
  </div>
  <div class="plan" aria-label="Your plan">
    <span class="plan-label">Plan</span>
    <span class="badge badge-lg tier-${account.tier.toLowerCase()}">${tierName(account.tier)}</span>
    <span class="plan-limits"><span>${formatNumber(options.limits.hourly)} requests / hour</span><span>${formatNumber(options.limits.monthly)} requests / month</span><span class="plan-note">Limits apply to each key</span></span>
  </div>
</div>
${revokedNotice}${notice}${errorNotice}${created}
<section class="card" aria-labelledby="keys-heading">
  <div class="card-head"><h2 id="keys-heading">Your keys</h2><span class="muted small">${active} active${revoked > 0 ? ` · ${revoked} revoked` : ''}</span></div>
  ${table}
</section>
<section class="card" aria-labelledby="create-heading">
  <div class="card-head"><h2 id="create-heading">Create a key</h2></div>
  <form method="post" action="/dashboard/api-keys" class="create-form">
    ${csrfField(options.csrfToken)}
    <div class="field field-grow">
      <label for="label">Label <span class="muted">(optional)</span></label>
      <input id="label" name="label" type="text" maxlength="100" placeholder="e.g. Production server" autocomplete="off" value="${options.label ?? ''}" aria-describedby="label-hint">
    </div>
    <button type="submit" class="btn btn-primary">Create key</button>
  </form>
  <p class="small muted" id="label-hint">New keys get your ${tierName(account.tier)} plan. You can have up to 10 active keys; the full key is shown once.</p>
</section>
${webhooksSection(account, keys, now, options.csrfToken, options.webhookForm ?? {}, options.localWebhookReceivers ?? false)}`,
  );
}

export function confirmRevokePage(options: { csrfToken: string; account: AccountView; key: KeyToRevoke; now: Date }): string {
  const { key } = options;
  return layout(
    { title: 'Revoke API key', csrfToken: options.csrfToken, account: options.account, narrow: true },
    html`<section class="card confirm-card" aria-labelledby="confirm-heading">
  <h1 id="confirm-heading">Revoke this API key?</h1>
  <dl class="key-summary">
    <div><dt>Key</dt><dd>${keyName(key)} <code class="key-prefix">${key.prefix}…</code></dd></div>
    <div><dt>Created</dt><dd>${time(key.createdAt, dateFormat.format(new Date(key.createdAt)))}</dd></div>
    <div><dt>Last used</dt><dd>${key.lastUsedAt ? time(key.lastUsedAt, relativeTime(key.lastUsedAt, options.now)) : 'Never'}</dd></div>
  </dl>
  <p class="alert alert-warning">Requests with this key will be refused with <code>401</code> within a second, and its webhooks stop. <strong>This cannot be undone.</strong></p>
  <form method="post" action="/dashboard/api-keys/${key.id}/revoke" class="button-row">
    ${csrfField(options.csrfToken)}
    <button type="submit" class="btn btn-danger">Revoke key</button>
    <a class="btn btn-secondary" href="/dashboard/api-keys">Cancel</a>
  </form>
</section>`,
  );
}

export function errorPage(options: { title: string; message: string; csrfToken?: string; account?: AccountView; action?: { href: string; text: string } }): string {
  const action = options.action ?? { href: '/dashboard/api-keys', text: 'Back to your API keys' };
  return layout(
    { title: options.title, csrfToken: options.csrfToken ?? '', account: options.csrfToken ? options.account : undefined, narrow: true },
    html`<section class="card error-card" aria-labelledby="error-heading">
  <h1 id="error-heading">${options.title}</h1>
  <p>${options.message}</p>
  <p><a class="btn btn-secondary" href="${action.href}">${action.text}</a></p>
</section>`,
  );
}
