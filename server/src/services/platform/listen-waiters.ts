import type { Sql } from '../../db/pool.js';

/**
 * Long polls woken by PostgreSQL notifications: one LISTEN connection per pool and channel, shared
 * by every waiting request of the process. A notification's payload names the subject whose rows
 * committed (an organization for GET /events, a push token's hash for GET /sandbox/wallet/pushes)
 * and wakes only that subject's waiting requests, which read again; an empty payload wakes all.
 * At most `perKey` polls of one key (a client, an address) are woken by notifications at once;
 * past it a poll is only held, and reads again when its `wait` runs out.
 */
const waiters = new WeakMap<Sql, Map<string, ListenWaiter>>();

export type ListenWaiter = ReturnType<typeof createListenWaiter>;

export function listenWaiters(sql: Sql, channel: string, perKey: number): ListenWaiter {
  let byChannel = waiters.get(sql);
  if (!byChannel) {
    byChannel = new Map();
    waiters.set(sql, byChannel);
  }
  let waiter = byChannel.get(channel);
  if (!waiter) {
    waiter = createListenWaiter(sql, channel, perKey);
    byChannel.set(channel, waiter);
  }
  return waiter;
}

function createListenWaiter(sql: Sql, channel: string, perKey: number) {
  /** The wake functions of the waiting polls, by subject. */
  const waiting = new Map<string, Set<() => void>>();
  const woken = new Map<string, number>();
  const sleeping = new Map<string, number>();
  const openByKey = new Map<string, number>();
  const wakeAll = (subject: string, wakes: Set<() => void>) => {
    woken.set(subject, (woken.get(subject) ?? 0) + wakes.size);
    for (const wake of wakes) wake();
  };
  const listening = sql
    .listen(channel, (subject) => {
      if (!subject) for (const [id, wakes] of waiting) wakeAll(id, wakes);
      else {
        const wakes = waiting.get(subject);
        if (wakes) wakeAll(subject, wakes);
      }
    })
    .catch(() => undefined);

  const wait = (subject: string) => {
    let resolveFired!: () => void;
    const fired = new Promise<void>((resolve) => (resolveFired = resolve));
    const wakes = waiting.get(subject) ?? new Set<() => void>();
    waiting.set(subject, wakes);
    const off = () => {
      wakes.delete(wake);
      if (!wakes.size && waiting.get(subject) === wakes) waiting.delete(subject);
    };
    const wake = () => {
      off();
      resolveFired();
    };
    wakes.add(wake);
    return {
      cancel: off,
      wait: async (ms: number, signal?: AbortSignal) => {
        await listening;
        await Promise.race([fired, delay(ms, signal)]);
        off();
      },
    };
  };

  /** A poll past its key's cap: woken by time only. */
  const sleep = (subject: string) => ({
    cancel: () => {},
    wait: async (ms: number, signal?: AbortSignal) => {
      sleeping.set(subject, (sleeping.get(subject) ?? 0) + 1);
      try {
        await delay(ms, signal);
      } finally {
        const left = (sleeping.get(subject) ?? 1) - 1;
        if (left > 0) sleeping.set(subject, left);
        else sleeping.delete(subject);
      }
    },
  });

  return {
    waiting: (subject: string) => waiting.get(subject)?.size ?? 0,
    woken: (subject: string) => woken.get(subject) ?? 0,
    sleeping: (subject: string) => sleeping.get(subject) ?? 0,
    /** A poll of `subject` by `key`: woken by notifications while `key` is within its cap, else by time only. */
    open(subject: string, key: string | undefined) {
      let counted = false;
      if (key !== undefined) {
        const open = openByKey.get(key) ?? 0;
        counted = open < perKey;
        if (counted) openByKey.set(key, open + 1);
      }
      const wakes = counted || key === undefined;
      let closed = false;
      return {
        wakes,
        next: () => (wakes ? wait(subject) : sleep(subject)),
        close: () => {
          if (closed || !counted || key === undefined) return;
          closed = true;
          const left = (openByKey.get(key) ?? 1) - 1;
          if (left > 0) openByKey.set(key, left);
          else openByKey.delete(key);
        },
      };
    },
  };
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
