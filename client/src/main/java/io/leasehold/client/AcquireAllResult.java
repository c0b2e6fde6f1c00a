package io.leasehold.client;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The outcome of {@link LeaseholdClient#acquireAll}: for each name asked for, granted, refused
 * (another holder has it, or policy said no), skipped (all or nothing: another name was refused),
 * or failed (its answer was lost, or came after the lease's TTL had run out on this client's clock:
 * the client gave such a grant back). The maps keep the order of the names asked for.
 *
 * @param granted the leases granted, by name; each renewed by the client until released or lost
 * @param refused the names not granted, each with a {@link Conflict} or a {@link Rejected}
 * @param skipped all or nothing: names that were free to grant but were not, since another was
 *     refused; empty otherwise
 * @param failed names whose acquisition failed, each with why; ask for them again
 */
public record AcquireAllResult(
    Map<String, Lease> granted,
    Map<String, AcquireResult> refused,
    List<String> skipped,
    Map<String, LeaseholdException> failed) {
  /**
   * Copies the maps and list, keeping their order.
   *
   * @param granted the leases granted, by name
   * @param refused the names not granted, each with a conflict or a rejection
   * @param skipped names skipped because another was refused (all or nothing)
   * @param failed names whose acquisition failed, each with why
   */
  public AcquireAllResult {
    granted = Collections.unmodifiableMap(new LinkedHashMap<>(granted));
    refused = Collections.unmodifiableMap(new LinkedHashMap<>(refused));
    skipped = List.copyOf(skipped);
    failed = Collections.unmodifiableMap(new LinkedHashMap<>(failed));
  }

  /**
   * Whether every name was granted.
   *
   * @return true if nothing was refused, skipped or failed
   */
  public boolean allGranted() {
    return refused.isEmpty() && skipped.isEmpty() && failed.isEmpty();
  }

  /**
   * The lease granted on {@code name}, if it was.
   *
   * @param name one of the names asked for
   * @return the lease, or empty if the name was refused or skipped
   */
  public Optional<Lease> lease(String name) {
    return Optional.ofNullable(granted.get(name));
  }
}
