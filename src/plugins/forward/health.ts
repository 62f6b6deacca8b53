// In-band health checking of one upstream, as CoreDNS does it: nothing runs while the upstream
// answers. A failed exchange starts a check loop that probes every `intervalMs` until a probe gets
// any reply at all; each failed probe adds to `fails`, a reply resets it. An upstream with
// `fails >= maxFails` is down and skipped (maxFails 0: never down, never checked).

export type Probe = () => Promise<boolean>;

export interface HealthEvents {
  /** A probe got no reply; `fails` counts this one. */
  failed?(fails: number): void;
  /** A probe got a reply after `fails` failed ones. */
  recovered?(fails: number): void;
}

export class HealthCheck {
  /** Consecutive failed probes. */
  fails = 0;
  private running = false;
  private stopped = false;
  private wake?: () => void;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly probe: Probe,
    private readonly intervalMs: number,
    private readonly events: HealthEvents = {},
  ) {}

  /** True while a check loop runs. */
  get checking(): boolean {
    return this.running;
  }

  isDown(maxFails: number): boolean {
    return maxFails > 0 && this.fails >= maxFails;
  }

  /** Starts the check loop unless one is running already. */
  trigger(): void {
    if (this.running || this.stopped) return;
    this.running = true;
    void this.loop();
  }

  private async loop(): Promise<void> {
    try {
      while (!this.stopped) {
        const started = Date.now();
        let ok = false;
        try {
          ok = await this.probe();
        } catch {
          ok = false;
        }
        if (this.stopped) break;
        if (ok) {
          const before = this.fails;
          this.fails = 0;
          if (before > 0) this.events.recovered?.(before);
          break;
        }
        this.fails++;
        this.events.failed?.(this.fails);
        // Probes start `intervalMs` apart; a slow probe (a timeout) is not followed by an extra wait.
        await this.sleep(Math.max(0, this.intervalMs - (Date.now() - started)));
      }
    } finally {
      this.running = false;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      this.timer = setTimeout(resolve, ms);
    });
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
  }
}
