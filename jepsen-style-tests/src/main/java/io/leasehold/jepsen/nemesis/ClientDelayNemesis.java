package io.leasehold.jepsen.nemesis;

/** Turns on {@link ClientFaults}: renewals and releases of the SDK clients are delayed. */
public final class ClientDelayNemesis implements Nemesis {
  private final long maxDelayMillis;

  public ClientDelayNemesis(long maxDelayMillis) {
    this.maxDelayMillis = maxDelayMillis;
  }

  @Override
  public String kind() {
    return "client-delay";
  }

  @Override
  public String name() {
    return "client-delay";
  }

  @Override
  public String start(NemesisContext ctx) {
    ctx.clientFaults().slow(maxDelayMillis);
    return "SDK renewals and releases delayed by up to " + maxDelayMillis + " ms";
  }

  @Override
  public String heal(NemesisContext ctx) {
    ctx.clientFaults().heal();
    return "client network fast again";
  }
}
