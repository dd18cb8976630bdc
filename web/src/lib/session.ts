/** The sign-in kept for this browser tab only (sessionStorage): closing the tab signs out. */
import type { Session } from './api.js';

const KEY = 'vdb.console.session';

export function loadSession(): Session | null {
  try {
    const value = JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as Session | null;
    return value && typeof value.username === 'string' && typeof value.token === 'string' ? value : null;
  } catch {
    return null;
  }
}

export const saveSession = (session: Session): void => sessionStorage.setItem(KEY, JSON.stringify(session));

export const clearSession = (): void => sessionStorage.removeItem(KEY);
