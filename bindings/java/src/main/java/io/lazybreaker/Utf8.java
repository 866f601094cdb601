package io.lazybreaker;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/** Strings to and from the library's NUL-terminated UTF-8 (see java.i). */
final class Utf8 {
  private Utf8() {}

  /**
   * {@code s} as UTF-8 with a NUL at the end. A NUL inside, or a lone
   * surrogate (which has no UTF-8 form), is refused rather than altered.
   */
  static byte[] nulTerminated(String s, String what) {
    if (s.indexOf('\0') >= 0) {
      throw new IllegalArgumentException(what + " must not contain NUL (U+0000)");
    }
    byte[] ascii = asciiNulTerminated(s);
    if (ascii != null) return ascii;
    ByteBuffer utf8;
    try {
      utf8 =
          StandardCharsets.UTF_8
              .newEncoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .encode(CharBuffer.wrap(s));
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException(what + " is not valid Unicode (a lone surrogate)", e);
    }
    byte[] out = new byte[utf8.remaining() + 1];
    utf8.get(out, 0, utf8.remaining());
    return out;
  }

  /**
   * The common case without an encoder, a CharBuffer and a ByteBuffer per
   * name: an ASCII name is its own UTF-8. Null when a char is not ASCII.
   */
  private static byte[] asciiNulTerminated(String s) {
    int n = s.length();
    byte[] out = new byte[n + 1];
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if (c >= 0x80) return null;
      out[i] = (byte) c;
    }
    return out;
  }

  static String decode(byte[] utf8) {
    return new String(utf8, StandardCharsets.UTF_8);
  }
}
