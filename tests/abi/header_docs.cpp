// Every CB_API declaration in the public headers has a doc block with @return,
// @since and a "Thread safety:" line whose phrase is one of the header's
// own vocabulary (its opening comment), followed by the end of a sentence.
// usage: abi_header_docs path/to/lazybreaker.h [path/to/fastpath.h ...]
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {

const char *const kVocabulary[] = {"any thread, lock-free", "any thread",
                                   "not with other calls on the same object"};

// The block's text with the comment markers and line breaks gone.
std::string flatten(const std::string &block) {
  std::string out;
  bool space = false;
  for (size_t i = 0; i < block.size(); ++i) {
    const char c = block[i];
    if (c == '\n') {
      space = true;
      while (i + 1 < block.size() && (block[i + 1] == ' ' || block[i + 1] == '*')) ++i;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// What is wrong with one declaration's block, or "".
std::string check(const std::string &text) {
  if (text.find("@return") == std::string::npos) return "no @return";
  if (text.find("@since") == std::string::npos) return "no @since";
  const size_t at = text.find("Thread safety: ");
  if (at == std::string::npos) return "no Thread safety line";
  const std::string rest = text.substr(at + 15);
  for (const char *phrase : kVocabulary) {
    const std::string p(phrase);
    if (rest.compare(0, p.size(), p) != 0) continue;
    const std::string after = rest.substr(p.size());
    if (after.rfind(".", 0) == 0 || after.rfind(" */", 0) == 0 || after.rfind("*/", 0) == 0)
      return "";
  }
  return "Thread safety phrase outside the vocabulary: \"" + rest.substr(0, 60) + "\"";
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s lazybreaker.h [other public headers]\n", argv[0]);
    return 2;
  }
  std::stringstream buf;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i]);
    buf << in.rdbuf() << '\n';
  }
  const std::string header = buf.str();
  int passed = 0, failed = 0;
  for (size_t at = header.find("\nCB_API "); at != std::string::npos;
       at = header.find("\nCB_API ", at + 1)) {
    const size_t name_at = header.find("cb_", at + 8);
    const std::string name = header.substr(name_at, header.find('(', name_at) - name_at);
    const size_t end = header.rfind("*/", at);
    const size_t begin = header.rfind("/**", end);
    const bool adjacent =
        end != std::string::npos && header.find_first_not_of(" \n", end + 2) == at + 1;
    const std::string why = !adjacent || begin == std::string::npos
                                ? "no doc block right above it"
                                : check(flatten(header.substr(begin, end + 2 - begin)));
    if (why.empty()) {
      ++passed;
    } else {
      ++failed;
      std::printf("%s: %s\n", name.c_str(), why.c_str());
    }
  }
  if (passed < 25) {
    std::printf("found only %d declarations: is the pattern stale?\n", passed);
    ++failed;
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
