package io.leasehold.server.fuzz;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongUnaryOperator;
import java.util.function.Predicate;

/**
 * Reflection over requests and replies: the tokens in them, and copies with some fields cleared or
 * changed.
 */
final class ProtoWalk {
  private ProtoWalk() {}

  /**
   * Every token, at any depth, in field order: an int64 field named {@code token}, and a session id
   * (which comes from the log position like a token: {@code session}, {@code sessions}, a Session's
   * {@code id}, a session list's {@code start_after}), and a transfer offer's id (its revision).
   */
  static List<Long> tokens(Message m) {
    List<Long> out = new ArrayList<>();
    collectTokens(m, out);
    return out;
  }

  private static void collectTokens(Message m, List<Long> out) {
    for (FieldDescriptor f : m.getDescriptorForType().getFields()) {
      if (f.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
        if (f.isRepeated()) {
          for (int i = 0; i < m.getRepeatedFieldCount(f); i++) {
            collectTokens((Message) m.getRepeatedField(f, i), out);
          }
        } else if (m.hasField(f)) {
          collectTokens((Message) m.getField(f), out);
        }
      } else if (isToken(f) && f.isRepeated()) {
        for (int i = 0; i < m.getRepeatedFieldCount(f); i++) {
          out.add((Long) m.getRepeatedField(f, i));
        }
      } else if (isToken(f)) {
        out.add((Long) m.getField(f));
      }
    }
  }

  /** A copy with every token field replaced by {@code map} of it. */
  static Message mapTokens(Message m, LongUnaryOperator map) {
    Message.Builder b = m.toBuilder();
    for (FieldDescriptor f : m.getDescriptorForType().getFields()) {
      if (f.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
        if (f.isRepeated()) {
          for (int i = 0; i < m.getRepeatedFieldCount(f); i++) {
            b.setRepeatedField(f, i, mapTokens((Message) m.getRepeatedField(f, i), map));
          }
        } else if (m.hasField(f)) {
          b.setField(f, mapTokens((Message) m.getField(f), map));
        }
      } else if (isToken(f) && f.isRepeated()) {
        for (int i = 0; i < m.getRepeatedFieldCount(f); i++) {
          b.setRepeatedField(f, i, map.applyAsLong((Long) m.getRepeatedField(f, i)));
        }
      } else if (isToken(f)) {
        long t = (Long) m.getField(f);
        long mapped = map.applyAsLong(t);
        if (mapped != t) {
          b.setField(f, mapped);
        }
      }
    }
    return b.build();
  }

  /** A copy without the fields {@code drop} picks, at any depth. */
  static Message without(Message m, Predicate<FieldDescriptor> drop) {
    Message.Builder b = m.toBuilder();
    for (FieldDescriptor f : m.getDescriptorForType().getFields()) {
      if (drop.test(f)) {
        b.clearField(f);
      } else if (f.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
        if (f.isRepeated()) {
          for (int i = 0; i < m.getRepeatedFieldCount(f); i++) {
            b.setRepeatedField(f, i, without((Message) m.getRepeatedField(f, i), drop));
          }
        } else if (m.hasField(f)) {
          b.setField(f, without((Message) m.getField(f), drop));
        }
      }
    }
    return b.build();
  }

  /**
   * What may differ between two runs that apply the same requests: fencing tokens and revisions
   * (log positions), leader-stamped times and what is computed from them.
   */
  static boolean runDependent(FieldDescriptor f) {
    String name = f.getName();
    return isToken(f)
        || name.equals("revision")
        || name.endsWith("_revision")
        || (f.getJavaType() == FieldDescriptor.JavaType.MESSAGE
            && f.getMessageType().getFullName().equals("google.protobuf.Timestamp"))
        || name.equals("remaining")
        || name.equals("retry_after")
        || name.equals("state")
        // A read's deadline: the leader's clock, asked when read.
        || name.equals("deadline_remaining")
        || name.equals("deadline_source")
        || name.equals("extensions")
        || (name.equals("message") && f.getContainingType().getName().equals("Rejection"));
  }

  private static boolean isToken(FieldDescriptor f) {
    if (f.getJavaType() != FieldDescriptor.JavaType.LONG) {
      return false;
    }
    String name = f.getName();
    String type = f.getContainingType().getName();
    return name.equals("token")
        || name.equals("session")
        || name.equals("sessions")
        || name.equals("offer")
        || (name.equals("id") && type.equals("Session"))
        || (name.equals("start_after") && type.equals("ListSessionsRequest"));
  }
}
