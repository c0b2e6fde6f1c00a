package io.leasehold.statemachine.core;

import io.leasehold.statemachine.store.InMemoryStore;
import io.leasehold.statemachine.store.KvStore;
import java.io.IOException;
import java.nio.file.Path;

class SessionPartInMemoryTest extends SessionPartContract {
  @Override
  protected KvStore newStore(Path tempDir) throws IOException {
    return new InMemoryStore();
  }
}
