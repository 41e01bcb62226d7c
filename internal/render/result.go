package render

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/evosignal/evosignal/internal/sqlservice"
)

// tableCellWidth is the widest a table cell prints; longer text wraps.
const tableCellWidth = 60

// WriteResult prints the result of a SQL query (analyze sql) in format:
// table (cells wrapped at tableCellWidth, at most TableWidth wide), csv, json
// (an array of row objects, values as the query service's JSON answers
// give them) or ndjson (the same objects, one a line).
func WriteResult(w io.Writer, format string, res *sqlservice.Result) error {
	switch format {
	case "json":
		return printJSONRows(w, res)
	case "ndjson":
		return printNDJSONRows(w, res)
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write(res.Columns)
		for _, r := range res.Rows {
			cells := make([]string, len(r))
			for i, v := range r {
				cells[i] = sqlservice.Text(res.Types[i], v)
			}
			cw.Write(cells)
		}
		cw.Flush()
		return cw.Error()
	}
	body := make([][]string, len(res.Rows))
	for r, row := range res.Rows {
		body[r] = make([]string, len(row))
		for i, v := range row {
			body[r][i] = "NULL"
			if v != nil {
				body[r][i] = sqlservice.Text(res.Types[i], v)
			}
		}
	}
	// A query's columns have no known kinds: the first one labels the
	// rows of a table split into blocks.
	labels := make([]bool, len(res.Columns))
	for i := 1; i < len(labels); i++ {
		labels[i] = true
	}
	if err := layout(w, res.Columns, body, labels); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "(%d rows)\n", len(res.Rows))
	return err
}

// printJSONRows prints the rows as a JSON array of objects, one per line,
// keys in column order, values as in the service's JSON answers.
func printJSONRows(w io.Writer, res *sqlservice.Result) error {
	bw := bufio.NewWriter(w)
	keys := make([][]byte, len(res.Columns))
	for i, c := range res.Columns {
		keys[i], _ = json.Marshal(c)
	}
	bw.WriteString("[")
	for r, row := range res.Rows {
		if r > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n  {")
		for i, v := range row {
			if i > 0 {
				bw.WriteString(", ")
			}
			b, err := marshalNoEscape(sqlservice.JSONValue(res.Types[i], v))
			if err != nil {
				return fmt.Errorf("row %d column %s: %w", r+1, res.Columns[i], err)
			}
			bw.Write(keys[i])
			bw.WriteString(": ")
			bw.Write(b)
		}
		bw.WriteString("}")
	}
	if len(res.Rows) > 0 {
		bw.WriteString("\n")
	}
	bw.WriteString("]\n")
	return bw.Flush()
}

func marshalNoEscape(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

// printNDJSONRows prints the rows as JSON objects, one a line, keys in
// column order, values as printJSONRows gives them.
func printNDJSONRows(w io.Writer, res *sqlservice.Result) error {
	bw := bufio.NewWriter(w)
	keys := make([][]byte, len(res.Columns))
	for i, c := range res.Columns {
		keys[i], _ = json.Marshal(c)
	}
	for r, row := range res.Rows {
		bw.WriteString("{")
		for i, v := range row {
			if i > 0 {
				bw.WriteString(",")
			}
			b, err := marshalNoEscape(sqlservice.JSONValue(res.Types[i], v))
			if err != nil {
				return fmt.Errorf("row %d column %s: %w", r+1, res.Columns[i], err)
			}
			bw.Write(keys[i])
			bw.WriteString(":")
			bw.Write(b)
		}
		bw.WriteString("}\n")
	}
	return bw.Flush()
}
