/**
 * The record page's own stylesheet (over the base every page shares: ../common/page-chrome.ts),
 * read once and served under a name carrying its content's hash (/record/assets/record.<hash>.css):
 * browsers keep it a year, and a release that changes it changes the name the page links to.
 */
import { readFileSync } from 'node:fs';
import { hashedFileName } from '../../src/server/static-assets.js';

export const STYLESHEET = readFileSync(new URL('./assets/record.css', import.meta.url));
export const STYLESHEET_PATH = `/record/assets/${hashedFileName('record.css', STYLESHEET)}`;
