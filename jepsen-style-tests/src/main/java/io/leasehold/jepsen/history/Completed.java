package io.leasehold.jepsen.history;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * An invocation and its completion; an operation that never completed is INFO at {@link
 * Long#MAX_VALUE}.
 */
public record Completed(Op invoke, Op completion) {
  public Completed {
    Objects.requireNonNull(invoke, "invoke");
    Objects.requireNonNull(completion, "completion");
  }

  public Op.Type type() {
    return completion.type();
  }

  public boolean ok() {
    return completion.type() == Op.Type.OK;
  }

  public static List<Completed> pair(List<Op> ops) {
    Map<Long, Op> open = new LinkedHashMap<>();
    Map<Long, Op> done = new HashMap<>();
    for (Op op : ops) {
      if (op.isInvoke()) {
        open.put(op.id(), op);
      } else {
        done.put(op.id(), op);
      }
    }
    List<Completed> out = new ArrayList<>(open.size());
    for (Op inv : open.values()) {
      Op c = done.get(inv.id());
      out.add(
          new Completed(
              inv,
              c != null
                  ? c
                  : inv.complete(Op.Type.INFO, inv.holder(), inv.token(), "", Long.MAX_VALUE)));
    }
    return out;
  }
}
