/** Editor tabs, kept in localStorage per user so statements survive a reload. */

export interface Tab {
  id: string;
  title: string;
  sql: string;
}

export interface TabState {
  tabs: Tab[];
  active: string;
}

interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

const key = (user: string) => `vdb.console.tabs.${user}`;

export const newTab = (n: number, sql = '', title = `Query ${n}`): Tab => ({ id: `t${Date.now().toString(36)}${n}`, title, sql });

export function loadTabs(store: KeyValueStore, user: string): TabState {
  try {
    const saved = JSON.parse(store.getItem(key(user)) ?? 'null') as TabState | null;
    if (saved && Array.isArray(saved.tabs) && saved.tabs.length > 0 && saved.tabs.every((t) => typeof t.sql === 'string')) {
      const active = saved.tabs.some((t) => t.id === saved.active) ? saved.active : saved.tabs[0]!.id;
      return { tabs: saved.tabs, active };
    }
  } catch {
    // a damaged entry starts over
  }
  const first = newTab(1, 'SELECT * FROM SYS.Tables');
  return { tabs: [first], active: first.id };
}

export function saveTabs(store: KeyValueStore, user: string, state: TabState): void {
  try {
    store.setItem(key(user), JSON.stringify(state));
  } catch {
    // storage full or disabled: the tabs live on for this page only
  }
}

/** The state without tab `id`; the neighbour becomes active, and there is always one tab. */
export function closeTab(state: TabState, id: string): TabState {
  const index = state.tabs.findIndex((t) => t.id === id);
  const tabs = state.tabs.filter((t) => t.id !== id);
  if (tabs.length === 0) {
    const fresh = newTab(1);
    return { tabs: [fresh], active: fresh.id };
  }
  const active = state.active === id ? tabs[Math.min(index, tabs.length - 1)]!.id : state.active;
  return { tabs, active };
}
