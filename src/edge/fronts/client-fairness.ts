/**
 * ClientFairness caps the requests one client address has in flight to one binding (one slow or
 * greedy client could queue a tenant's other clients behind the agent's 256 sockets per backend). Past the cap the edge answers 429 at once, without a tunnel stream,
 * as Envoy's local rate limit does per descriptor; the binding's other clients keep their share.
 * Counted per edge process; clients behind one NAT address share a cap.
 */
export class ClientFairness {
  readonly #max: number;
  readonly #inFlight = new Map<string, number>();

  /** `max` requests in flight per (binding, client address). */
  constructor(max: number) {
    this.#max = max;
  }

  /** inFlight is the number of requests (binding, client) has in flight now. */
  inFlight(bindingId: string, clientAddress: string): number {
    return this.#inFlight.get(slotKey(bindingId, clientAddress)) ?? 0;
  }

  /** acquire takes one slot, or returns undefined when the client holds the cap; the returned function gives it back (once). */
  acquire(bindingId: string, clientAddress: string): (() => void) | undefined {
    const key = slotKey(bindingId, clientAddress);
    const held = this.#inFlight.get(key) ?? 0;
    if (held >= this.#max) return undefined;
    this.#inFlight.set(key, held + 1);
    let isReleased = false;
    return () => {
      if (isReleased) return;
      isReleased = true;
      const left = (this.#inFlight.get(key) ?? 1) - 1;
      if (left > 0) this.#inFlight.set(key, left);
      else this.#inFlight.delete(key);
    };
  }
}

function slotKey(bindingId: string, clientAddress: string): string {
  return `${bindingId}\n${clientAddress}`;
}
