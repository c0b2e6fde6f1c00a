package io.leasehold.statemachine.store;

import java.nio.file.Path;

class InMemoryStoreTest extends KvStoreContract {
  @Override
  protected KvStore newStore(Path tempDir) {
    return new InMemoryStore();
  }
}
