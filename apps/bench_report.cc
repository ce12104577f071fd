#include "bench_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

namespace directgnn::cli {
namespace {

std::string html_escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '&') {
      out += "&amp;";
    } else if (c == '"') {
      out += "&quot;";
    } else {
      out += c;
    }
  }
  return out;
}

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

// Three significant digits: 0.842, 12.3, 123, 0.00123.
std::string seconds_text(double seconds) {
  if (seconds <= 0) return "0";
  const int digits = 2 - static_cast<int>(std::floor(std::log10(seconds)));
  return fixed(seconds, std::clamp(digits, 0, 6));
}

// 1234567 -> "1,234,567".
std::string grouped(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string bytes_text(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  return (unit == 0 ? fixed(bytes, 0)
                    : fixed(bytes, bytes < 10    ? 2
                                   : bytes < 100 ? 1
                                                 : 0)) +
         " " + units[unit];
}

std::string plural(int64_t n, const char* one, const char* many) {
  return grouped(n) + " " + (n == 1 ? one : many);
}

// torch's dtype names ("Float", "Half") as numpy users know them.
std::string dtype_text(const std::string& torch_name) {
  if (torch_name == "Float") return "float32";
  if (torch_name == "Half") return "float16";
  if (torch_name == "BFloat16") return "bfloat16";
  if (torch_name == "Double") return "float64";
  return torch_name;
}

int64_t dtype_bytes(const std::string& torch_name) {
  if (torch_name == "Half" || torch_name == "BFloat16") return 2;
  if (torch_name == "Double") return 8;
  return 4;
}

// The setup as rows a person reads; keys this does not know are listed as they are, so a
// field added to the setup is never lost from the page.
std::vector<std::pair<std::string, std::string>> setup_rows(const nlohmann::json& setup) {
  std::vector<std::pair<std::string, std::string>> rows;
  std::set<std::string> shown;
  auto has = [&](std::initializer_list<const char*> keys) {
    for (const char* key : keys) {
      if (!setup.contains(key) || setup[key].is_null()) return false;
    }
    for (const char* key : keys) shown.insert(key);
    return true;
  };
  if (has({"dataset"})) rows.emplace_back("dataset", setup["dataset"].get<std::string>());
  if (has({"nodes", "edges"})) {
    const int64_t nodes = setup["nodes"], edges = setup["edges"];
    rows.emplace_back("graph", plural(nodes, "node", "nodes") + ", " +
                                   plural(edges, "edge", "edges") + " (average degree " +
                                   fixed(nodes > 0 ? double(edges) / nodes : 0.0, 1) + ")");
  }
  if (has({"feat_dim", "feat_dtype"})) {
    const std::string dtype = setup["feat_dtype"];
    const int64_t dim = setup["feat_dim"];
    std::string text = grouped(dim) + " per node, " + dtype_text(dtype);
    if (setup.contains("nodes")) {
      text += " (table " +
              bytes_text(double(setup["nodes"].get<int64_t>()) * dim * dtype_bytes(dtype)) + ")";
    }
    rows.emplace_back("features", text);
  }
  if (has({"dataset_build_s", "dataset_peak_rss_bytes"})) {
    rows.emplace_back("dataset ready in",
                      seconds_text(setup["dataset_build_s"]) + " s; peak resident memory " +
                          bytes_text(setup["dataset_peak_rss_bytes"].get<double>()));
  }
  if (has({"model", "layers", "hidden"})) {
    rows.emplace_back("model", setup["model"].get<std::string>() + ", " +
                                   plural(setup["layers"], "layer", "layers") + ", hidden " +
                                   grouped(setup["hidden"]));
  }
  if (has({"fanout", "batch_size"})) {
    rows.emplace_back("sampling", "fan-out " + setup["fanout"].get<std::string>() + ", " +
                                      plural(setup["batch_size"], "seed", "seeds") +
                                      " per minibatch");
  }
  if (has({"epochs", "prefetch"})) {
    const nlohmann::json& prefetch = setup["prefetch"];
    const int64_t warmup = setup.value("warmup_epochs", int64_t{0});
    shown.insert("warmup_epochs");
    rows.emplace_back(
        "epochs",
        grouped(setup["epochs"]) + " per mode" +
            (warmup > 0
                 ? " (times from the last " +
                       plural(setup["epochs"].get<int64_t>() - warmup, "epoch", "epochs") + ")"
                 : "") +
            ", prefetching " +
            (prefetch.is_number() ? plural(prefetch, "minibatch", "minibatches")
                                  : "as each mode's default (none on the CPU)"));
  }
  if (has({"threads", "ranks"})) {
    rows.emplace_back("parallelism", plural(setup["threads"], "thread", "threads") + " × " +
                                         plural(setup["ranks"], "rank", "ranks"));
  }
  for (const auto& [key, value] : setup.items()) {
    if (shown.count(key) == 0) {
      rows.emplace_back(key, value.is_string() ? value.get<std::string>() : value.dump());
    }
  }
  return rows;
}

bool has_timings(const nlohmann::json& run) { return run.contains("epoch_time_s"); }

double number(const nlohmann::json& run, const char* key) {
  return run.contains(key) && run[key].is_number() ? run[key].get<double>() : 0.0;
}

// An axis from 0 to a round number at or above `longest`, with ticks at 1, 2 or 5 x 10^k.
struct Axis {
  double step = 1, max = 1;
  int digits = 0;
};

Axis seconds_axis(double longest) {
  Axis a;
  const double raw = std::max(longest, 1e-6) / 5;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / magnitude;
  a.step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * magnitude;
  a.max = std::max(1.0, std::ceil(longest / a.step - 1e-9)) * a.step;
  a.digits = std::max(0, -static_cast<int>(std::floor(std::log10(a.step) + 1e-9)));
  return a;
}

// The breakdown chart's geometry, in SVG pixels.
constexpr double kLabel = 290, kPlot = 600, kRight = 90, kBar = 18, kGap = 4, kRowGap = 16,
                 kTop = 10, kAxis = 46;

double bar_x(const Axis& axis, double seconds) {
  return kLabel + kPlot * std::max(0.0, seconds) / axis.max;
}

// Grid lines, ticks and the axis title under the bars.
void breakdown_axis(std::ostream& s, const Axis& axis, double plot_height) {
  const double axis_y = kTop + plot_height;
  s << "<g class=\"axis\">\n";
  const int ticks = static_cast<int>(std::lround(axis.max / axis.step));
  for (int i = 0; i <= ticks; ++i) {
    const double value = i * axis.step, tx = bar_x(axis, value);
    s << "<line class=\"grid\" x1=\"" << fixed(tx, 1) << "\" y1=\"" << kTop << "\" x2=\""
      << fixed(tx, 1) << "\" y2=\"" << axis_y << "\"/><line class=\"tick\" x1=\"" << fixed(tx, 1)
      << "\" y1=\"" << axis_y << "\" x2=\"" << fixed(tx, 1) << "\" y2=\"" << axis_y + 5
      << "\"/><text class=\"tick-label\" x=\"" << fixed(tx, 1) << "\" y=\"" << axis_y + 18
      << "\" text-anchor=\"middle\">" << fixed(value, axis.digits) << "</text>\n";
  }
  s << "<line class=\"tick\" x1=\"" << kLabel << "\" y1=\"" << axis_y << "\" x2=\""
    << kLabel + kPlot << "\" y2=\"" << axis_y << "\"/>\n<text class=\"axis-title\" x=\""
    << kLabel + kPlot / 2 << "\" y=\"" << axis_y + 38
    << "\" text-anchor=\"middle\">seconds per epoch</text>\n</g>\n";
}

struct Segment {
  const char* css;
  const char* name;
  double seconds;
};

// One stacked bar at height y: its label, a rectangle per segment (with its value where it
// fits inside) and the total after it.
void breakdown_bar(std::ostream& s, const Axis& axis, double y, const char* label,
                   const std::vector<Segment>& segments) {
  s << "<text class=\"bar-label\" x=\"" << kLabel - 8 << "\" y=\"" << y + kBar / 2
    << "\" text-anchor=\"end\" dominant-baseline=\"central\">" << label << "</text>\n";
  double at = 0;
  for (const Segment& seg : segments) {
    const double left = bar_x(axis, at), right = bar_x(axis, at + std::max(0.0, seg.seconds));
    at += std::max(0.0, seg.seconds);
    if (right - left <= 0) continue;
    s << "<rect class=\"" << seg.css << "\" x=\"" << fixed(left, 2) << "\" y=\"" << y
      << "\" width=\"" << fixed(right - left, 2) << "\" height=\"" << kBar << "\"><title>"
      << seg.name << ": " << seconds_text(seg.seconds) << " s</title></rect>\n";
    const std::string value = seconds_text(seg.seconds);
    if (right - left >= 7.0 * value.size() + 8) {
      s << "<text class=\"in-bar\" x=\"" << fixed((left + right) / 2, 2) << "\" y=\""
        << y + kBar / 2 << "\" text-anchor=\"middle\" dominant-baseline=\"central\">" << value
        << "</text>\n";
    }
  }
  s << "<text class=\"bar-value\" x=\"" << fixed(bar_x(axis, at) + 6, 2) << "\" y=\""
    << y + kBar / 2 << "\" dominant-baseline=\"central\">" << seconds_text(at) << " s</text>\n";
}

// Per run two stacked bars in one SVG: the training loop's epoch (compute, waiting for data,
// the rest) and the workers' time preparing minibatches (sampling, gathering).
// A run's sampler, and how the host waited for the GPU where that was not CUDA's own choice.
std::string sampler_label(const nlohmann::json& run) {
  std::string label = run["sampler"].get<std::string>();
  if (run.contains("cuda_sync") && run["cuda_sync"] != "auto")
    label += ", " + run["cuda_sync"].get<std::string>() + " wait";
  return label;
}

std::string breakdown_svg(const nlohmann::json& runs) {
  std::vector<const nlohmann::json*> timed;
  double longest = 0;
  for (const auto& run : runs) {
    if (!has_timings(run)) continue;
    timed.push_back(&run);
    longest = std::max(
        {longest, number(run, "epoch_time_s"), number(run, "sample_s") + number(run, "gather_s")});
  }
  const Axis axis = seconds_axis(longest);
  const double plot_height = timed.size() * (2 * kBar + kGap + kRowGap);
  const double width = kLabel + kPlot + kRight, height = kTop + plot_height + kAxis;
  std::ostringstream s;
  s << "<svg class=\"breakdown\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width
    << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << ' ' << height << "\">\n";
  breakdown_axis(s, axis, plot_height);
  double y = kTop + kRowGap / 2;
  for (const nlohmann::json* run : timed) {
    const double epoch = number(*run, "epoch_time_s"), compute = number(*run, "compute_s"),
                 wait = number(*run, "wait_s");
    s << "<text class=\"run-label\" x=\"" << kLabel - 80 << "\" y=\"" << y + kBar + kGap / 2
      << "\" text-anchor=\"end\" dominant-baseline=\"central\">"
      << html_escape((*run)["mode"].get<std::string>() + " / " + sampler_label(*run))
      << "</text>\n";
    breakdown_bar(s, axis, y, "loop",
                  {{"compute", "compute", compute},
                   {"wait", "waiting for data", wait},
                   {"other", "rest", std::max(0.0, epoch - compute - wait)}});
    breakdown_bar(s, axis, y + kBar + kGap, "workers",
                  {{"sample", "sampling", number(*run, "sample_s")},
                   {"gather", "gathering", number(*run, "gather_s")}});
    y += 2 * kBar + kGap + kRowGap;
  }
  s << "</svg>\n";
  return s.str();
}

std::string runs_table(const nlohmann::json& runs) {
  std::ostringstream h;
  h << "<table class=\"runs\"><tr><th class=\"name\">mode</th><th "
       "class=\"name\">sampler</th><th>epoch (s)</th>"
       "<th>sample (s)</th><th>gather (s)</th><th>compute (s)</th><th>wait (s)</th>"
       "<th>CPU (s/epoch)</th><th>GPU energy (J/epoch)</th><th>peak GPU memory</th>"
       "<th>speed-up</th><th>test acc</th></tr>\n";
  auto cell = [](const nlohmann::json& run, const char* key, int digits) {
    if (!run.contains(key) || !run[key].is_number()) return std::string("&ndash;");
    return fixed(run[key].get<double>(), digits);
  };
  // Seconds to three significant digits, so that a small graph's 0.4 ms is not "0.000".
  auto seconds = [](const nlohmann::json& run, const char* key) {
    if (!run.contains(key) || !run[key].is_number()) return std::string("&ndash;");
    return seconds_text(run[key].get<double>());
  };
  for (const auto& run : runs) {
    h << "<tr><td class=\"name\">" << html_escape(run["mode"].get<std::string>())
      << "</td><td class=\"name\">" << html_escape(sampler_label(run)) << "</td>";
    if (!has_timings(run)) {
      const bool interrupted = run.contains("interrupted");
      h << "<td colspan=\"10\" class=\"skipped\">" << (interrupted ? "interrupted: " : "skipped: ")
        << html_escape(run.value(interrupted ? "interrupted" : "skipped", std::string()))
        << "</td></tr>\n";
      continue;
    }
    h << "<td>" << seconds(run, "epoch_time_s") << "</td><td>" << seconds(run, "sample_s")
      << "</td><td>" << seconds(run, "gather_s") << "</td><td>" << seconds(run, "compute_s")
      << "</td><td>" << seconds(run, "wait_s") << "</td><td>" << seconds(run, "cpu_s")
      << "</td><td>" << cell(run, "gpu_energy_j", 1) << "</td><td>"
      << (run.contains("gpu_peak_bytes") && run["gpu_peak_bytes"].is_number()
              ? bytes_text(run["gpu_peak_bytes"].get<double>())
              : "&ndash;")
      << "</td><td>" << (run.contains("speedup") ? cell(run, "speedup", 2) + "×" : "&ndash;")
      << "</td><td>" << cell(run, "test_acc", 4) << "</td></tr>\n";
  }
  h << "</table>\n";
  return h.str();
}

}  // namespace

std::string comparison_html(const nlohmann::json& result) {
  const nlohmann::json& runs = result["runs"];
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>directgnn bench train</title>"
       "<style>body{font-family:sans-serif;font-size:14px;margin:1.5em 2em;color:#222}"
       "h1{font-size:1.6em;margin:0 0 .6em}h2{font-size:1.2em;margin:1.4em 0 .5em}"
       "table{border-collapse:collapse}"
       "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#eee}"
       "table.config th{text-align:left;font-weight:normal;color:#555}"
       "table.config td{text-align:left}.name{text-align:left}"
       "td.skipped{text-align:left;color:#777}"
       ".compute{background:#4e79a7;fill:#4e79a7}.wait{background:#e15759;fill:#e15759}"
       ".other{background:#bab0ac;fill:#bab0ac}.sample{background:#59a14f;fill:#59a14f}"
       ".gather{background:#f28e2b;fill:#f28e2b}"
       ".key span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;"
       "vertical-align:-1px}"
       "svg text{font-family:sans-serif;font-size:12px;fill:#222}"
       "svg .grid{stroke:#e4e4e4}svg .tick{stroke:#888}svg .tick-label{fill:#555}"
       "svg .bar-label{fill:#777;font-size:11px}svg .in-bar{fill:#fff;font-size:11px}"
       "svg .run-label{font-weight:bold}.note{color:#555;max-width:60em}</style>"
       "</head><body>\n<h1>directgnn bench train</h1>\n<h2>Setup</h2>\n<table class=\"config\">\n";
  for (const auto& [key, value] : setup_rows(result["setup"])) {
    h << "<tr><th>" << html_escape(key) << "</th><td>" << html_escape(value) << "</td></tr>\n";
  }
  h << "</table>\n<h2>Runs</h2>\n" << runs_table(runs);
  if (!result.value("complete", true)) {
    h << "<p class=\"note\">Incomplete: the command stopped before every mode had run.</p>\n";
  }
  if (std::any_of(runs.begin(), runs.end(),
                  [](const nlohmann::json& run) { return run.contains("speedup"); })) {
    h << "<p class=\"note\">Speed-up: over conventional with the CPU sampler.</p>\n";
  }
  h << "<h2>Where the epoch goes</h2>\n";
  if (std::none_of(runs.begin(), runs.end(), has_timings)) {
    h << "<p class=\"note\">No mode ran on this machine.</p>\n</body></html>\n";
    return h.str();
  }
  h << "<p class=\"key\">training loop:<span class=\"compute\"></span>compute"
       "<span class=\"wait\"></span>waiting for data<span class=\"other\"></span>rest"
       " &nbsp; workers:<span class=\"sample\"></span>sampling<span class=\"gather\"></span>"
       "gathering</p>\n"
    << breakdown_svg(runs)
    << "<p class=\"note\">Per run, the upper bar is the training loop's epoch; the lower bar is "
       "the time the workers spent preparing its minibatches, which overlaps training when "
       "prefetching.</p>\n</body></html>\n";
  return h.str();
}

}  // namespace directgnn::cli
