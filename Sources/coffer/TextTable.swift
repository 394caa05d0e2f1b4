/// Rows printed as aligned columns, two spaces apart. The last column (free text such as a
/// label) is not padded, so lines carry no trailing blanks.
enum TextTable {
    static func lines(_ rows: [[String]]) -> [String] {
        let padded = (rows.map(\.count).max() ?? 1) - 1
        let widths = (0..<padded).map { column in rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
        return rows.map { row in
            var line = ""
            for (column, cell) in row.enumerated() {
                line += column < padded ? cell + String(repeating: " ", count: widths[column] - cell.count + 2) : cell
            }
            return line
        }
    }
}
