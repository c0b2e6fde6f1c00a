package io.leasehold.statemachine.core;

import io.leasehold.statemachine.store.InMemoryStore;
import io.leasehold.statemachine.store.KvStore;
import java.io.IOException;
import java.nio.file.Path;

class MoveInMemoryTest extends MoveContract {
  @Override
  protected KvStore newStore(Path tempDir) throws IOException {
    return new InMemoryStore();
  }
}
