/**
 * Wake-ups for long polls (CONTRACT §9 `wait`): a reader that found nothing new waits until a change
 * to its hub commits, on this node or any other, or until its time is up.
 *
 * Subscribe first, then look, then wait: a change that commits between the look and the wait still
 * wakes the reader. A wake-up says "look again", never what changed, so a lost or extra one costs
 * a read at most; a reader whose wake-up never comes answers when its time is up.
 */

import type { Waiter } from '../store.js';

/** Told of a hub's commit; `undefined`: anything may have changed (a lost connection to the other nodes). */
export type ChangeListener = (hubId: string | undefined) => void;

export interface Wakeups {
  subscribe(hubId: string): Waiter;
  /** Calls `listener` for every hub that changes, on any node; returns how to stop. */
  listen(listener: ChangeListener): () => void;
  /** Wakes this node's waiters of these hubs (after a commit here). */
  wake(hubIds: Iterable<string>): void;
  close(): Promise<void>;
}

/** The waiters of this process, by hub. Each engine's wake-ups end here. */
export class LocalWakeups implements Wakeups {
  private readonly waiting = new Map<string, Set<() => void>>();
  private readonly listeners = new Set<ChangeListener>();

  listen(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.wakeAll();
  }

  subscribe(hubId: string): Waiter {
    let woken = false;
    let wake: (() => void) | undefined;
    const onChange = () => {
      woken = true;
      wake?.();
    };
    let set = this.waiting.get(hubId);
    if (!set) {
      set = new Set();
      this.waiting.set(hubId, set);
    }
    set.add(onChange);
    const cancel = () => {
      set.delete(onChange);
      if (set.size === 0 && this.waiting.get(hubId) === set) this.waiting.delete(hubId);
      wake?.();
    };
    return {
      wait: (ms) =>
        woken
          ? Promise.resolve(true)
          : new Promise<boolean>((resolve) => {
              const timer = setTimeout(() => resolve(woken), ms);
              wake = () => {
                clearTimeout(timer);
                resolve(woken);
              };
            }),
      cancel,
    };
  }

  /** Wakes every waiter of these hubs: after a commit here, or when another node says it committed. */
  wake(hubIds: Iterable<string>): void {
    for (const hubId of hubIds) {
      for (const onChange of this.waiting.get(hubId) ?? []) onChange();
      for (const listener of this.listeners) listener(hubId);
    }
  }

  /** Wakes every waiter (after a lost connection to the other nodes: something may have been missed). */
  wakeAll(): void {
    for (const set of this.waiting.values()) for (const onChange of set) onChange();
    for (const listener of this.listeners) listener(undefined);
  }

  /** How many readers wait now (for metrics and tests). */
  get size(): number {
    let n = 0;
    for (const set of this.waiting.values()) n += set.size;
    return n;
  }
}
