import { v7 as uuidv7 } from 'uuid';

/** Time-ordered UUIDs (v7) keep primary-key indexes append-mostly. */
export function newId(): string {
  return uuidv7();
}
