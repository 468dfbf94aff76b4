/**
 * The dashboard's webhook pages (docs/DASHBOARD.md "Webhooks"): a secret shown once (after
 * creation or rotation), the outcome of a test delivery, and the delete confirmation. The
 * webhook list with its forms is part of the keys page (./pages.ts).
 */
import type { MyWebhookQuery, TestMyWebhookMutation } from '../common/generated/graphql.js';
import { html } from './html.js';
import { csrfField, eventName, layout, type AccountView } from './pages.js';

export type WebhookView = MyWebhookQuery['webhookSubscription'];
export type WebhookTestView = TestMyWebhookMutation['testWebhookSubscription'];

const BACK = html`<a class="btn btn-secondary" href="/dashboard/api-keys">Back to your API keys</a>`;

function endpointSummary(subscription: WebhookView) {
  return html`<dl class="key-summary">
    <div><dt>Endpoint</dt><dd><code class="subscription-url">${subscription.url}</code></dd></div>
    <div><dt>Events</dt><dd>${subscription.events.map((event) => html`<span class="tag">${eventName(event)}</span> `)}</dd></div>
  </dl>`;
}

/** After creation (201) or rotation (200): the signing secret, shown only on this page. */
export function webhookSecretPage(options: { csrfToken: string; account: AccountView; subscription: WebhookView; secret: string; rotated: boolean }): string {
  const { subscription } = options;
  const heading = options.rotated ? 'New signing secret' : 'Webhook endpoint added';
  const overlap = options.rotated
    ? html`<p class="small">For the next 24 hours the previous secret still signs too: <code>webhook-signature</code> carries both signatures (new first), so a receiver using either secret keeps verifying while you deploy this one. <code>X-Service-Signature</code> is signed with the new secret only.</p>`
    : html`<p class="small">Every delivery carries <code>X-Service-Signature: sha256=&lt;hex&gt;</code> (HMAC-SHA256 of the raw body keyed with this secret) and the Standard Webhooks headers <code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>.</p>`;
  return layout(
    { title: heading, csrfToken: options.csrfToken, account: options.account, narrow: true },
    html`<section class="card new-key" aria-labelledby="secret-heading">
  <h1 id="secret-heading">${heading}</h1>
  ${endpointSummary(subscription)}
  <p class="new-key-warning"><svg class="icon" viewBox="0 0 20 20" aria-hidden="true" focusable="false"><path fill="currentColor" d="M10 1.5l9 16H1l9-16zm-1 6v5h2v-5H9zm0 6.5v2h2v-2H9z"/></svg><span><strong>Copy this signing secret now.</strong> It will not be shown again: we keep it encrypted and never display it.</span></p>
  <div class="key-reveal">
    <label for="webhook-secret-value" class="visually-hidden">Signing secret</label>
    <textarea id="webhook-secret-value" class="mono" rows="2" readonly spellcheck="false" autocomplete="off">${options.secret}</textarea>
    <button type="button" class="btn btn-primary" data-copy-target="webhook-secret-value" hidden>Copy</button>
  </div>
  <p class="copy-status small" role="status" aria-live="polite"></p>
  ${overlap}
  <div class="button-row">
    <form method="post" action="/dashboard/webhooks/${subscription.id}/test">${csrfField(options.csrfToken)}<button type="submit" class="btn btn-secondary">Send a test delivery</button></form>
    ${BACK}
  </div>
</section>`,
  );
}

function outcomeText(result: WebhookTestView): string {
  if (result.succeeded) return `Your endpoint answered HTTP ${result.statusCode} in ${result.durationMs} ms.`;
  if (result.errorKind === 'http_status') return `Your endpoint answered HTTP ${result.statusCode} (${result.durationMs} ms): only a 2xx counts as delivered.`;
  return `The delivery failed after ${result.durationMs} ms: ${result.error ?? result.errorKind ?? 'unknown error'}.`;
}

export function webhookTestPage(options: { csrfToken: string; account: AccountView; subscription: WebhookView; result: WebhookTestView }): string {
  const { subscription, result } = options;
  const alert = result.succeeded
    ? html`<div class="alert alert-success" role="status"><strong>Test delivered.</strong> ${outcomeText(result)}</div>`
    : html`<div class="alert alert-error" role="alert"><strong>Test failed.</strong> ${outcomeText(result)}</div>`;
  return layout(
    { title: 'Test delivery', csrfToken: options.csrfToken, account: options.account, narrow: true },
    html`<section class="card confirm-card" aria-labelledby="test-heading">
  <h1 id="test-heading">Test delivery</h1>
  ${endpointSummary(subscription)}
  ${alert}
  <p class="small muted">A sample <code>pick.published</code> with <code>"test": true</code> in the body and <code>X-Service-Test: true</code>, signed like every delivery (delivery id <code>${result.deliveryId}</code>). It is sent once, never retried and not listed among the deliveries.</p>
  ${result.responseBody ? html`<h2 class="small-heading">Your endpoint's answer (first 4 KiB)</h2><pre class="response-body mono">${result.responseBody}</pre>` : null}
  <div class="button-row">
    <form method="post" action="/dashboard/webhooks/${subscription.id}/test">${csrfField(options.csrfToken)}<button type="submit" class="btn btn-secondary">Send again</button></form>
    ${BACK}
  </div>
</section>`,
  );
}

export function confirmDeleteWebhookPage(options: { csrfToken: string; account: AccountView; subscription: WebhookView }): string {
  const { subscription } = options;
  return layout(
    { title: 'Delete webhook endpoint', csrfToken: options.csrfToken, account: options.account, narrow: true },
    html`<section class="card confirm-card" aria-labelledby="confirm-heading">
  <h1 id="confirm-heading">Delete this webhook endpoint?</h1>
  ${endpointSummary(subscription)}
  <p class="alert alert-warning">Deliveries still queued for it are never sent and its delivery log is deleted. <strong>This cannot be undone.</strong></p>
  <form method="post" action="/dashboard/webhooks/${subscription.id}/delete" class="button-row">
    ${csrfField(options.csrfToken)}
    <button type="submit" class="btn btn-danger">Delete endpoint</button>
    <a class="btn btn-secondary" href="/dashboard/api-keys">Cancel</a>
  </form>
</section>`,
  );
}
