package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.StoredSession;
import java.util.Optional;

/**
 * A session created or kept alive ({@code session} present, as it is now), or ended (empty), by an
 * applied entry: the leader's expiry ticker follows these as it follows lease events.
 */
public record SessionChange(long id, Optional<StoredSession> session) {}
