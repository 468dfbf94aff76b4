/** The service's mark, shared by every page it renders (dashboard, record, landing page, GraphiQL). */
import { BASE_STYLESHEET_NAME } from '../common/page-chrome.js';
import { html } from './html.js';

/** The favicon, served with the dashboard's assets. */
export const FAVICON_PATH = '/dashboard/assets/favicon.svg';
/** The base stylesheet the dashboard and the record page link (../common/page-chrome.ts), served with the dashboard's assets. */
export const BASE_STYLESHEET_PATH = `/dashboard/assets/${BASE_STYLESHEET_NAME}`;

export const LOGO = html`<svg class="logo" viewBox="0 0 32 32" aria-hidden="true" focusable="false"><rect width="32" height="32" rx="8" fill="currentColor"/><path d="M9 21.5l5-6 4 3.5 5.5-8" fill="none" stroke="#fff" stroke-width="2.6" stroke-linecap="round" stroke-linejoin="round"/><circle cx="23.5" cy="11" r="2.2" fill="#fff"/></svg>`;
