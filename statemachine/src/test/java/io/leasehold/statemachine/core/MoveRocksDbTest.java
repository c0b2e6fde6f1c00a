package io.leasehold.statemachine.core;

import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.RocksDbStore;
import java.io.IOException;
import java.nio.file.Path;

class MoveRocksDbTest extends MoveContract {
  @Override
  protected KvStore newStore(Path tempDir) throws IOException {
    return RocksDbStore.open(tempDir.resolve("db"));
  }
}
