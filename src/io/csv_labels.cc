#include "io/csv_labels.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <map>

#include "directgnn/error.h"
#include "io/csv.h"

namespace directgnn {
namespace {

std::string column_list(const std::vector<std::string>& header) {
  std::string out;
  for (const std::string& name : header) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// The index of the column named `name` in `header`; throws listing the columns otherwise.
size_t find_column(const std::vector<std::string>& header, const std::string& name,
                   const char* option, const std::string& where) {
  size_t found = header.size();
  for (size_t c = 0; c < header.size(); ++c) {
    if (trimmed(header[c]) != name) continue;
    DGNN_CHECK(found == header.size(), where, ": the header has two columns named '", name,
               "'; rename one so ", option, " picks a single column");
    found = c;
  }
  DGNN_CHECK(found < header.size(), where, ": has no column '", name,
             "' (columns: ", column_list(header), "); choose one with ", option);
  return found;
}

size_t id_column(const std::vector<std::string>& header, const std::string& name,
                 const std::string& where) {
  if (!name.empty()) return find_column(header, name, "id_column", where);
  for (size_t c = 0; c < header.size(); ++c) {
    if (trimmed(header[c]) == "id") return c;
  }
  return 0;
}

struct Row {
  int64_t node, line;
  std::string name;
};

// Class ids for the sorted names: numeric order when all are integers ("2" before "10").
std::map<std::string, int64_t> class_ids(const std::vector<Row>& rows,
                                         std::vector<std::string>& names) {
  for (const Row& r : rows) names.push_back(r.name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  const bool numeric = std::all_of(names.begin(), names.end(), [](const std::string& s) {
    int64_t v = 0;
    return parse_int(s, v);
  });
  if (numeric) {
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
      int64_t x = 0, y = 0;
      parse_int(a, x);
      parse_int(b, y);
      return x < y || (x == y && a < b);
    });
  }
  std::map<std::string, int64_t> ids;
  for (size_t k = 0; k < names.size(); ++k) ids[names[k]] = static_cast<int64_t>(k);
  return ids;
}

// One data row's node id and class name, checked.
Row parse_row(const CsvRecord& record, size_t id_col, size_t label_col,
              const std::vector<std::string>& header, int64_t num_nodes, const std::string& where) {
  const std::string_view id_text = trimmed(record.fields[id_col]);
  Row row{-1, record.line, std::string(trimmed(record.fields[label_col]))};
  const std::string here = where + " line " + std::to_string(record.line) + ": ";
  DGNN_CHECK(parse_int(id_text, row.node) && row.node >= 0, here, "'", id_text, "' in column '",
             header[id_col], "' is not a node id (a non-negative integer as in the edge list); ",
             "pick the id column with id_column");
  DGNN_CHECK(row.node < num_nodes, here, "node ", row.node,
             " is not in the graph (its nodes are 0 to ", num_nodes - 1,
             "); remove the row, or give features with one row per node");
  DGNN_CHECK(!row.name.empty(), here, "node ", row.node, " has no label in column '",
             header[label_col], "'; remove the row to leave the node unlabelled");
  DGNN_CHECK(is_valid_utf8(row.name), here, "the label in column '", header[label_col],
             "' is not valid UTF-8; save the file as UTF-8");
  return row;
}

}  // namespace

NamedLabels read_csv_labels(const TextSource& source, int64_t num_nodes,
                            const CsvLabelColumns& columns) {
  const std::string& where = source.where;
  const std::string text = source.in_memory ? std::string(source.bytes) : read_all_text(source);
  CsvReader reader(text, where);
  CsvRecord header;
  DGNN_CHECK(reader.next(header), where,
             ": is empty; expected a header line naming the columns, then one row per node");
  DGNN_CHECK(!columns.label.empty(), where,
             ": name the column holding the classes with label_column (columns: ",
             column_list(header.fields), ")");
  const size_t label_col = find_column(header.fields, columns.label, "label_column", where);
  const size_t id_col = id_column(header.fields, columns.id, where);
  std::vector<Row> rows;
  std::vector<int64_t> first_line(static_cast<size_t>(num_nodes), 0);
  for (CsvRecord record; reader.next(record);) {
    Row row = parse_row(record, id_col, label_col, header.fields, num_nodes, where);
    int64_t& seen = first_line[static_cast<size_t>(row.node)];
    DGNN_CHECK(seen == 0, where, " line ", record.line, ": node ", row.node,
               " already has a label on line ", seen, "; give each node one row");
    seen = record.line;
    rows.push_back(std::move(row));
  }
  DGNN_CHECK(!rows.empty(), where, ": has a header but no rows of labels");
  NamedLabels out;
  const std::map<std::string, int64_t> ids = class_ids(rows, out.class_names);
  out.labels = at::full({num_nodes}, -1, at::kLong);
  int64_t* lab = out.labels.data_ptr<int64_t>();
  for (const Row& r : rows) lab[r.node] = ids.at(r.name);
  return out;
}

}  // namespace directgnn
