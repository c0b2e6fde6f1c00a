package io.leasehold.server;

import com.google.protobuf.Duration;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.RenewItem;
import io.leasehold.proto.v1.RenewRequest;

/** Short builders for test requests. */
public final class Requests {
  private Requests() {}

  public static Duration seconds(long s) {
    return Duration.newBuilder().setSeconds(s).build();
  }

  public static AcquireRequest acquire(String name, String holder, long ttlSeconds) {
    return AcquireRequest.newBuilder()
        .setName(name)
        .setHolder(holder)
        .setTtl(seconds(ttlSeconds))
        .build();
  }

  public static RenewRequest renew(String name, long token) {
    return RenewRequest.newBuilder()
        .addItems(RenewItem.newBuilder().setName(name).setToken(token))
        .build();
  }

  public static ReleaseRequest release(String name, long token) {
    return ReleaseRequest.newBuilder().setName(name).setToken(token).build();
  }

  public static GetRequest get(String name) {
    return GetRequest.newBuilder().setName(name).build();
  }

  public static GetRequest staleGet(String name) {
    return GetRequest.newBuilder().setName(name).setStale(true).build();
  }

  public static ListRequest list(String prefix) {
    return ListRequest.newBuilder().setPrefix(prefix).build();
  }
}
