package io.leasehold.statemachine.core;

import io.leasehold.statemachine.store.InMemoryStore;
import io.leasehold.statemachine.store.KvStore;
import java.nio.file.Path;

class ServiceVersionInMemoryTest extends ServiceVersionContract {
  @Override
  protected KvStore newStore(Path tempDir) {
    return new InMemoryStore();
  }
}
