/**
 * The waiting requests of a catalog lane, served fairly (docs/CATALOG.md "Threads"):
 * each client (an opaque key the caller gives, the peer address for discovery) has its own FIFO
 * and its own share of the queue, and clients take turns, so a few clients sending request after
 * request cannot push an honest one behind all of theirs. A heavy request (a search of many
 * terms) is only taken while the lane has room for one more heavy request, so the light ones
 * always find a free thread. With one client and nothing heavy this is a plain FIFO (the writer).
 */
interface QueuedJob {
  client: string;
  heavy: boolean;
}

export class FairQueue<J extends QueuedJob> {
  /** Clients with waiting jobs, in turn order: the next turn is the first entry. */
  private readonly byClient = new Map<string, J[]>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  waiting(client: string): number {
    return this.byClient.get(client)?.length ?? 0;
  }

  push(job: J): void {
    const jobs = this.byClient.get(job.client);
    if (jobs) jobs.push(job);
    else this.byClient.set(job.client, [job]);
    this.count++;
  }

  /** Removes a job that gave up waiting (its deadline passed); false when it was not waiting. */
  remove(job: J): boolean {
    const jobs = this.byClient.get(job.client);
    const at = jobs?.indexOf(job) ?? -1;
    if (!jobs || at === -1) return false;
    jobs.splice(at, 1);
    if (jobs.length === 0) this.byClient.delete(job.client);
    this.count--;
    return true;
  }

  /** Whether take(heavyAllowed) would return a job. */
  ready(heavyAllowed: boolean): boolean {
    for (const jobs of this.byClient.values()) if (heavyAllowed || !jobs[0]!.heavy) return true;
    return false;
  }

  /**
   * The next job to run: the oldest job of the first client in turn whose oldest job may run now
   * (a heavy one only when `heavyAllowed`); that client's turn then goes to the back.
   */
  take(heavyAllowed: boolean): J | undefined {
    for (const [client, jobs] of this.byClient) {
      const job = jobs[0]!;
      if (job.heavy && !heavyAllowed) continue;
      jobs.shift();
      this.byClient.delete(client);
      if (jobs.length > 0) this.byClient.set(client, jobs);
      this.count--;
      return job;
    }
    return undefined;
  }

  /** Empties the queue, returning every waiting job. */
  drain(): J[] {
    const all = [...this.byClient.values()].flat();
    this.byClient.clear();
    this.count = 0;
    return all;
  }
}
