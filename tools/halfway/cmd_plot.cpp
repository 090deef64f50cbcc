// `halfway plot REPORT.json -o FILE.svg`: draws the histograms (and rounding-model counts, when
// the report has them) of the document `halfway diff --json` printed, as one self-contained SVG.
#include "cli_util.hpp"
#include "commands.hpp"
#include "halfway/io/read.hpp"
#include "halfway/support/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

namespace halfway::cli {

namespace {

// Ordered: model counts are drawn in the order the document lists them.
using json = nlohmann::ordered_json;

struct PlotOptions {
  std::string input;
  std::string output;
};

// What the plot draws of one buffer.
struct Bucket {
  std::string label;
  uint64_t count = 0;
};
struct BufferPlot {
  std::string title;   // "kernel on device: buffer (type[size])"
  std::string summary; // "65536 exact, 0 within bound, 0 violations, 0 unchecked"
  std::string unit;    // "ulps of f16", or "integer units"
  bool ok = true;      // the report's verdict
  std::vector<Bucket> buckets;
  uint64_t nan_mismatch = 0;
  std::vector<Bucket> models; // name and count, in the document's order
};

// Reads and checks the document; every mistake names the file and where in the document it is.
class Reader {
public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& why) const {
    ErrorContext c;
    c.file = file_;
    throw Error(ErrorKind::Usage,
                (where.empty() ? "" : where + ": ") + why +
                    " (plot reads the document `halfway diff --json` prints)",
                c);
  }

  const json& member(const json& object, const std::string& where, const char* key) const {
    auto it = object.find(key);
    if (it == object.end())
      fail(where, std::string("no \"") + key + "\"");
    return *it;
  }
  const json& object(const json& parent, const std::string& where, const char* key) const {
    const json& v = member(parent, where, key);
    if (!v.is_object())
      fail(where + "." + key, "expected an object");
    return v;
  }
  const json& array(const json& parent, const std::string& where, const char* key) const {
    const json& v = member(parent, where, key);
    if (!v.is_array())
      fail(where + "." + key, "expected an array");
    return v;
  }
  std::string string(const json& parent, const std::string& where, const char* key) const {
    const json& v = member(parent, where, key);
    if (!v.is_string())
      fail(where + "." + key, "expected a string");
    return v.get<std::string>();
  }
  uint64_t count(const json& v, const std::string& where) const {
    if (!v.is_number_unsigned())
      fail(where, "expected a non-negative integer");
    return v.get<uint64_t>();
  }
  uint64_t count(const json& parent, const std::string& where, const char* key) const {
    return count(member(parent, where, key), where + "." + key);
  }
  bool boolean(const json& parent, const std::string& where, const char* key) const {
    const json& v = member(parent, where, key);
    if (!v.is_boolean())
      fail(where + "." + key, "expected true or false");
    return v.get<bool>();
  }

  std::vector<BufferPlot> read(const std::string& text) const {
    json doc;
    try {
      doc = json::parse(text);
    } catch (const json::exception& e) {
      fail("", std::string("not valid JSON: ") + e.what());
    }
    if (!doc.is_object())
      fail("", "expected a JSON object at the top");
    const std::string command = string(doc, "the document", "command");
    if (command != "diff")
      fail("command", "\"" + escape_for_terminal(command) + "\", not \"diff\"");
    const json& results = array(doc, "the document", "results");
    if (results.empty()) {
      const json& error = member(doc, "the document", "error");
      if (error.is_object() && error.contains("message") && error["message"].is_string())
        fail("", "the run failed and has no report to draw: " +
                     escape_for_terminal(error["message"].get<std::string>()));
      fail("results", "empty: no report to draw");
    }
    std::vector<BufferPlot> out;
    for (size_t r = 0; r < results.size(); ++r) {
      const std::string rw = "results[" + std::to_string(r) + "]";
      const json& report = results[r];
      if (!report.is_object())
        fail(rw, "expected an object");
      const std::string kernel = string(report, rw, "kernel");
      const std::string device = string(report, rw, "device");
      const bool ok = boolean(report, rw, "ok");
      const json& buffers = array(report, rw, "buffers");
      for (size_t b = 0; b < buffers.size(); ++b) {
        const std::string bw = rw + ".buffers[" + std::to_string(b) + "]";
        const json& buffer = buffers[b];
        if (!buffer.is_object())
          fail(bw, "expected an object");
        BufferPlot p;
        p.ok = ok;
        const std::string type = string(buffer, bw, "type");
        const bool is_float = type == "f16" || type == "bf16" || type == "f32" || type == "f64" ||
                              type == "e4m3" || type == "e5m2";
        p.unit = is_float ? "ulps of " + type : "integer units";
        p.title = kernel + " on " + device + ": " + string(buffer, bw, "name") + " (" + type + "[" +
                  std::to_string(count(buffer, bw, "size")) + "])";
        p.summary = std::to_string(count(buffer, bw, "exact")) + " exact, " +
                    std::to_string(count(buffer, bw, "within_bound")) + " within bound, " +
                    std::to_string(count(buffer, bw, "violations")) + " violations, " +
                    std::to_string(count(buffer, bw, "unchecked")) + " unchecked";
        const json& histogram = object(buffer, bw, "histogram");
        const std::string hw = bw + ".histogram";
        const json& buckets = array(histogram, hw, "buckets");
        if (buckets.empty())
          fail(hw + ".buckets", "empty: there is always bucket 0");
        for (size_t k = 0; k < buckets.size(); ++k) {
          const std::string kw = hw + ".buckets[" + std::to_string(k) + "]";
          if (!buckets[k].is_object())
            fail(kw, "expected an object");
          p.buckets.push_back({string(buckets[k], kw, "label"), count(buckets[k], kw, "count")});
        }
        p.nan_mismatch = count(histogram, hw, "nan_mismatch");
        // Rounding-model counts are optional: {"NAME": COUNT} or {"NAME": {"count": COUNT, ...}}.
        if (auto m = buffer.find("models"); m != buffer.end() && !m->is_null()) {
          if (!m->is_object())
            fail(bw + ".models", "expected an object of counts");
          for (const auto& [name, value] : m->items()) {
            const std::string mw = bw + ".models." + escape_for_terminal(name);
            const json& c = value.is_object() ? member(value, mw, "count") : value;
            p.models.push_back({name, count(c, value.is_object() ? mw + ".count" : mw)});
          }
        }
        out.push_back(std::move(p));
      }
    }
    if (out.empty())
      fail("results", "no report has an output buffer: nothing to draw");
    return out;
  }

private:
  std::string file_;
};

// Text for an SVG element: XML's special characters as entities, and the characters XML 1.0
// forbids (control characters) as U+FFFD, so that any name still gives a valid file.
std::string xml(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&apos;";
      break;
    default:
      if ((c < 0x20 && c != '\t') || c == 0x7f)
        out += "\xef\xbf\xbd";
      else
        out += static_cast<char>(c);
    }
  }
  return out;
}

// At most `n` bytes of a label, cut at a character boundary and marked with an ellipsis: a long
// model name would otherwise run off the left edge.
std::string shorten(const std::string& s, size_t n = 18) {
  if (s.size() <= n)
    return s;
  size_t cut = n - 1;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80)
    --cut;
  return s.substr(0, cut) + "\xe2\x80\xa6"; // U+2026
}

// Layout, in pixels.
constexpr int kWidth = 840, kMargin = 20, kLabel = 110, kRow = 18, kBar = 560;

std::string svg(const std::vector<BufferPlot>& plots) {
  std::ostringstream body;
  int y = kMargin;
  auto text = [&](int x, int ty, const std::string& s, const char* extra = "") {
    body << "<text x=\"" << x << "\" y=\"" << ty << "\"" << extra << ">" << xml(s) << "</text>\n";
  };
  // One row: a label, a bar of `fraction` of the bar width, and the count after it.
  auto row = [&](const std::string& label, uint64_t count, double fraction, const char* colour) {
    text(kMargin + kLabel - 6, y + 13, label, " text-anchor=\"end\"");
    const int w = count ? std::max(1, static_cast<int>(std::lround(fraction * kBar))) : 0;
    body << "<rect x=\"" << kMargin + kLabel << "\" y=\"" << y + 2 << "\" width=\"" << w
         << "\" height=\"" << kRow - 4 << "\" fill=\"" << colour << "\"/>\n";
    text(kMargin + kLabel + w + 6, y + 13, std::to_string(count));
    y += kRow;
  };
  for (const BufferPlot& p : plots) {
    text(kMargin, y + 14, p.title, " font-weight=\"bold\"");
    y += kRow + 2;
    text(kMargin, y + 13, p.summary + (p.ok ? " (report: OK)" : " (report: not OK)"),
         p.ok ? "" : " fill=\"#b00020\"");
    y += kRow + 4;
    text(kMargin, y + 13,
         "elements by distance from the reference in " + p.unit + " (bars: log(1 + count))",
         " fill=\"#555555\"");
    y += kRow;
    // Counts span orders of magnitude (65535 exact, 1 off): a log scale keeps every bucket seen.
    uint64_t largest = p.nan_mismatch;
    for (const Bucket& b : p.buckets)
      largest = std::max(largest, b.count);
    const double scale = std::log1p(static_cast<double>(std::max<uint64_t>(largest, 1)));
    auto share = [&](uint64_t c) { return std::log1p(static_cast<double>(c)) / scale; };
    for (size_t k = 0; k < p.buckets.size(); ++k)
      row(p.buckets[k].label, p.buckets[k].count, share(p.buckets[k].count),
          k == 0 ? "#2e7d32" : "#ef6c00");
    if (p.nan_mismatch)
      row("NaN", p.nan_mismatch, share(p.nan_mismatch), "#b00020");
    if (!p.models.empty()) {
      y += 6;
      text(kMargin, y + 13, "rounding models (elements each explains; bars: share of the largest)",
           " fill=\"#555555\"");
      y += kRow;
      uint64_t most = 1;
      for (const Bucket& m : p.models)
        most = std::max(most, m.count);
      for (const Bucket& m : p.models)
        row(shorten(m.label), m.count, static_cast<double>(m.count) / static_cast<double>(most),
            "#1565c0");
    }
    y += kRow;
  }
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << y
      << "\" viewBox=\"0 0 " << kWidth << " " << y << "\" font-family=\"sans-serif\" "
      << "font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
      << body.str() << "</svg>\n";
  return out.str();
}

} // namespace

Runner add_plot(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "plot", "Draw the histograms (and rounding-model counts) of a `halfway diff --json` "
              "document as an SVG file");
  auto o = std::make_shared<PlotOptions>();
  sub->add_option("report", o->input, "The JSON document `halfway diff --json` printed")
      ->required();
  sub->add_option("--output,-o", o->output, "The SVG file to write (replaced atomically)")
      ->required()
      ->type_name("FILE.svg");
  return [o] {
    // The output is checked before the (possibly long) read, so a typo costs nothing.
    check_output_path(o->output, "--output");
    const std::vector<BufferPlot> plots = Reader(o->input).read(io::read_file(o->input));
    write_file_atomically(o->output, svg(plots));
    return 0;
  };
}

} // namespace halfway::cli
