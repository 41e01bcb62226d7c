package sqlservice

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	duckdb "github.com/duckdb/duckdb-go/v2"
)

// MetaType is the key of the Arrow field metadata that holds a column's
// DuckDB type (see Type).
const MetaType = "duckdb.type"

// arrowType is the Arrow layout of t; textual types are UTF-8 strings.
func arrowType(t *Type) arrow.DataType {
	if t.textual() {
		return arrow.BinaryTypes.String
	}
	switch t.Name {
	case "BOOLEAN":
		return arrow.FixedWidthTypes.Boolean
	case "TINYINT":
		return arrow.PrimitiveTypes.Int8
	case "SMALLINT":
		return arrow.PrimitiveTypes.Int16
	case "INTEGER":
		return arrow.PrimitiveTypes.Int32
	case "BIGINT":
		return arrow.PrimitiveTypes.Int64
	case "UTINYINT":
		return arrow.PrimitiveTypes.Uint8
	case "USMALLINT":
		return arrow.PrimitiveTypes.Uint16
	case "UINTEGER":
		return arrow.PrimitiveTypes.Uint32
	case "UBIGINT":
		return arrow.PrimitiveTypes.Uint64
	case "FLOAT":
		return arrow.PrimitiveTypes.Float32
	case "DOUBLE":
		return arrow.PrimitiveTypes.Float64
	case "BLOB", "GEOMETRY":
		return arrow.BinaryTypes.Binary
	case "UUID":
		return &arrow.FixedSizeBinaryType{ByteWidth: 16}
	case "DATE":
		return arrow.FixedWidthTypes.Date32
	case "TIME":
		return arrow.FixedWidthTypes.Time64us
	case "TIMESTAMP":
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	case "TIMESTAMPTZ":
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	case "TIMESTAMP_S":
		return &arrow.TimestampType{Unit: arrow.Second}
	case "TIMESTAMP_MS":
		return &arrow.TimestampType{Unit: arrow.Millisecond}
	case "TIMESTAMP_NS":
		return &arrow.TimestampType{Unit: arrow.Nanosecond}
	case "INTERVAL":
		return arrow.FixedWidthTypes.MonthDayNanoInterval
	case "HUGEINT":
		return &arrow.Decimal128Type{Precision: 38, Scale: 0}
	case "DECIMAL":
		return &arrow.Decimal128Type{Precision: int32(t.Width), Scale: int32(t.Scale)}
	case "LIST":
		return arrow.ListOf(arrowType(t.Elem))
	case "ARRAY":
		return arrow.FixedSizeListOf(int32(t.Size), arrowType(t.Elem))
	case "STRUCT":
		fields := make([]arrow.Field, len(t.Fields))
		for i, f := range t.Fields {
			fields[i] = arrow.Field{Name: f.Name, Type: arrowType(f.Type), Nullable: true}
		}
		return arrow.StructOf(fields...)
	case "MAP":
		return arrow.MapOf(arrowType(t.Key), arrowType(t.Value))
	case "SQLNULL":
		return arrow.Null
	}
	return arrow.BinaryTypes.String
}

// Schema is the Arrow schema of a result: one nullable field per column,
// its DuckDB type in the field metadata under MetaType.
func Schema(columns []string, types []*Type) *arrow.Schema {
	fields := make([]arrow.Field, len(columns))
	for i, c := range columns {
		fields[i] = arrow.Field{
			Name: c, Type: arrowType(types[i]), Nullable: true,
			Metadata: arrow.NewMetadata([]string{MetaType}, []string{types[i].String()}),
		}
	}
	return arrow.NewSchema(fields, nil)
}

// typesOf reads the DuckDB types of an Arrow schema written by Schema.
func typesOf(s *arrow.Schema) ([]string, []*Type, error) {
	cols := make([]string, s.NumFields())
	types := make([]*Type, s.NumFields())
	for i, f := range s.Fields() {
		cols[i] = f.Name
		name, ok := f.Metadata.GetValue(MetaType)
		if !ok {
			return nil, nil, fmt.Errorf("column %q: no %s metadata", f.Name, MetaType)
		}
		t, err := ParseType(name)
		if err != nil {
			return nil, nil, fmt.Errorf("column %q: %w", f.Name, err)
		}
		if want := arrowType(t); !arrow.TypeEqual(f.Type, want) {
			return nil, nil, fmt.Errorf("column %q: Arrow type %s does not match %s (want %s)", f.Name, f.Type, name, want)
		}
		types[i] = t
	}
	return cols, types, nil
}

// appendFunc appends one driver value (nil for NULL) to a builder.
type appendFunc func(v any) error

func mismatch(t *Type, v any) error {
	return fmt.Errorf("%s value of Go type %T", t, v)
}

// scalar appends values of exactly Go type T.
func scalar[T any](t *Type, b array.Builder, put func(T)) appendFunc {
	return func(v any) error {
		switch x := v.(type) {
		case nil:
			b.AppendNull()
		case T:
			put(x)
		default:
			return mismatch(t, v)
		}
		return nil
	}
}

// converted appends values of Go type T converted by conv.
func converted[T, U any](t *Type, b array.Builder, put func(U), conv func(T) (U, error)) appendFunc {
	return func(v any) error {
		switch x := v.(type) {
		case nil:
			b.AppendNull()
		case T:
			u, err := conv(x)
			if err != nil {
				return err
			}
			put(u)
		default:
			return mismatch(t, v)
		}
		return nil
	}
}

func ok[T, U any](f func(T) U) func(T) (U, error) {
	return func(x T) (U, error) { return f(x), nil }
}

// newAppender returns the function that appends the driver's values of a
// column of type t to b (a builder of arrowType(t)).
func newAppender(t *Type, b array.Builder) appendFunc {
	if t.textual() {
		sb := b.(*array.StringBuilder)
		return func(v any) error {
			if v == nil {
				sb.AppendNull()
				return nil
			}
			s, err := toText(t, v)
			if err != nil {
				return err
			}
			sb.Append(s)
			return nil
		}
	}
	switch t.Name {
	case "BOOLEAN":
		return scalar(t, b, b.(*array.BooleanBuilder).Append)
	case "TINYINT":
		return scalar(t, b, b.(*array.Int8Builder).Append)
	case "SMALLINT":
		return scalar(t, b, b.(*array.Int16Builder).Append)
	case "INTEGER":
		return scalar(t, b, b.(*array.Int32Builder).Append)
	case "BIGINT":
		return scalar(t, b, b.(*array.Int64Builder).Append)
	case "UTINYINT":
		return scalar(t, b, b.(*array.Uint8Builder).Append)
	case "USMALLINT":
		return scalar(t, b, b.(*array.Uint16Builder).Append)
	case "UINTEGER":
		return scalar(t, b, b.(*array.Uint32Builder).Append)
	case "UBIGINT":
		return scalar(t, b, b.(*array.Uint64Builder).Append)
	case "FLOAT":
		return scalar(t, b, b.(*array.Float32Builder).Append)
	case "DOUBLE":
		return scalar(t, b, b.(*array.Float64Builder).Append)
	case "BLOB", "GEOMETRY":
		return scalar(t, b, b.(*array.BinaryBuilder).Append)
	case "UUID":
		return scalar(t, b, b.(*array.FixedSizeBinaryBuilder).Append)
	case "DATE":
		return converted(t, b, b.(*array.Date32Builder).Append, ok(arrow.Date32FromTime))
	case "TIME":
		return converted(t, b, b.(*array.Time64Builder).Append, ok(func(x time.Time) arrow.Time64 {
			return arrow.Time64((int64(x.Hour())*3600+int64(x.Minute())*60+int64(x.Second()))*1e6 + int64(x.Nanosecond())/1e3)
		}))
	case "TIMESTAMP", "TIMESTAMPTZ":
		return converted(t, b, b.(*array.TimestampBuilder).Append, ok(func(x time.Time) arrow.Timestamp { return arrow.Timestamp(x.UnixMicro()) }))
	case "TIMESTAMP_S":
		return converted(t, b, b.(*array.TimestampBuilder).Append, ok(func(x time.Time) arrow.Timestamp { return arrow.Timestamp(x.Unix()) }))
	case "TIMESTAMP_MS":
		return converted(t, b, b.(*array.TimestampBuilder).Append, ok(func(x time.Time) arrow.Timestamp { return arrow.Timestamp(x.UnixMilli()) }))
	case "TIMESTAMP_NS":
		return converted(t, b, b.(*array.TimestampBuilder).Append, ok(func(x time.Time) arrow.Timestamp { return arrow.Timestamp(x.UnixNano()) }))
	case "INTERVAL":
		return converted(t, b, b.(*array.MonthDayNanoIntervalBuilder).Append, ok(func(x duckdb.Interval) arrow.MonthDayNanoInterval {
			return arrow.MonthDayNanoInterval{Months: x.Months, Days: x.Days, Nanoseconds: x.Micros * 1000}
		}))
	case "HUGEINT":
		return converted(t, b, b.(*array.Decimal128Builder).Append, num128)
	case "DECIMAL":
		return converted(t, b, b.(*array.Decimal128Builder).Append, func(x duckdb.Decimal) (decimal128.Num, error) { return num128(x.Value) })
	case "LIST":
		lb := b.(*array.ListBuilder)
		elem := newAppender(t.Elem, lb.ValueBuilder())
		return func(v any) error {
			switch xs := v.(type) {
			case nil:
				lb.AppendNull()
				return nil
			case []any:
				lb.Append(true)
				return appendAll(elem, xs)
			}
			return mismatch(t, v)
		}
	case "ARRAY":
		fb := b.(*array.FixedSizeListBuilder)
		elem := newAppender(t.Elem, fb.ValueBuilder())
		return func(v any) error {
			switch xs := v.(type) {
			case nil:
				fb.AppendNull()
				return nil
			case []any:
				if len(xs) != t.Size {
					return fmt.Errorf("%s value with %d elements", t, len(xs))
				}
				fb.Append(true)
				return appendAll(elem, xs)
			}
			return mismatch(t, v)
		}
	case "STRUCT":
		sb := b.(*array.StructBuilder)
		fields := make([]appendFunc, len(t.Fields))
		for i, f := range t.Fields {
			fields[i] = newAppender(f.Type, sb.FieldBuilder(i))
		}
		return func(v any) error {
			switch m := v.(type) {
			case nil:
				sb.AppendNull()
				return nil
			case map[string]any:
				sb.Append(true)
				for i, f := range t.Fields {
					if err := fields[i](m[f.Name]); err != nil {
						return fmt.Errorf("field %q: %w", f.Name, err)
					}
				}
				return nil
			}
			return mismatch(t, v)
		}
	case "MAP":
		mb := b.(*array.MapBuilder)
		key, item := newAppender(t.Key, mb.KeyBuilder()), newAppender(t.Value, mb.ItemBuilder())
		return func(v any) error {
			switch m := v.(type) {
			case nil:
				mb.AppendNull()
				return nil
			case duckdb.OrderedMap:
				mb.Append(true)
				vals := m.Values()
				for i, k := range m.Keys() {
					if err := key(k); err != nil {
						return err
					}
					if err := item(vals[i]); err != nil {
						return err
					}
				}
				return nil
			}
			return mismatch(t, v)
		}
	case "SQLNULL":
		return func(v any) error {
			if v != nil {
				return mismatch(t, v)
			}
			b.AppendNull()
			return nil
		}
	}
	panic(fmt.Sprintf("query: no appender for %s", t)) // arrowType and known agree
}

func appendAll(f appendFunc, xs []any) error {
	for i, x := range xs {
		if err := f(x); err != nil {
			return fmt.Errorf("element %d: %w", i+1, err)
		}
	}
	return nil
}

var (
	two64  = new(big.Int).Lsh(big.NewInt(1), 64)
	two128 = new(big.Int).Lsh(big.NewInt(1), 128)
	min128 = new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 127))
	max128 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 127), big.NewInt(1))
)

// num128 is v as a 128-bit two's complement number (HUGEINT's range).
func num128(v *big.Int) (decimal128.Num, error) {
	if v == nil {
		return decimal128.Num{}, fmt.Errorf("nil big integer")
	}
	if v.Cmp(min128) < 0 || v.Cmp(max128) > 0 {
		return decimal128.Num{}, fmt.Errorf("integer %s does not fit 128 bits", v)
	}
	u := new(big.Int).Set(v)
	if u.Sign() < 0 {
		u.Add(u, two128)
	}
	lo := new(big.Int).Mod(u, two64).Uint64()
	hi := new(big.Int).Rsh(u, 64).Uint64()
	return decimal128.New(int64(hi), lo), nil
}

// bigOf builds the *big.Int of a 128-bit number the way the DuckDB driver
// builds HUGEINT values, so that results compare equal with reflect.DeepEqual.
func bigOf(n decimal128.Num) *big.Int {
	i := big.NewInt(n.HighBits())
	i.Lsh(i, 64)
	i.Add(i, new(big.Int).SetUint64(n.LowBits()))
	return i
}

// Layout of TIMETZ values in text form.
const timeTZLayout = "15:04:05.999999Z07:00"

// toText is the text form of a value of a textual type.
func toText(t *Type, v any) (string, error) {
	if t.Name == "JSON" {
		b, err := json.Marshal(v)
		return string(b), err
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case time.Time:
		return x.Format(timeTZLayout), nil
	case *big.Int:
		return x.String(), nil
	case fmt.Stringer:
		return x.String(), nil
	}
	// A JSON value inside a nested type (the driver names a JSON[] column
	// VARCHAR[] but gives decoded JSON), a UNION, and anything else: JSON.
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("%s value of Go type %T: %w", t, v, err)
	}
	return string(b), nil
}

// fromText is the Go value of the text form s of a textual type, as the
// DuckDB driver gives it.
func fromText(t *Type, s string) (any, error) {
	switch t.Name {
	case "JSON":
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return nil, fmt.Errorf("JSON value: %w", err)
		}
		return v, nil
	case "TIMETZ":
		p, err := time.Parse(timeTZLayout, s)
		if err != nil {
			return nil, fmt.Errorf("TIMETZ value: %w", err)
		}
		loc := time.UTC
		if _, off := p.Zone(); off != 0 {
			loc = time.FixedZone("", off)
		}
		return time.Date(1, time.January, 1, p.Hour(), p.Minute(), p.Second(), p.Nanosecond(), loc), nil
	case "UHUGEINT", "BIGNUM":
		i, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, fmt.Errorf("%s value %q", t.Name, s)
		}
		return i, nil
	}
	return strings.Clone(s), nil
}

// getFunc reads row i of one column as the DuckDB driver's Go value.
type getFunc func(i int) (any, error)

// newGetter returns the reader of arr, a column of type t.
func newGetter(t *Type, arr arrow.Array) getFunc {
	inner := newInnerGetter(t, arr)
	return func(i int) (any, error) {
		if arr.IsNull(i) {
			return nil, nil
		}
		return inner(i)
	}
}

func just[T any](f func(int) T) getFunc {
	return func(i int) (any, error) { return f(i), nil }
}

func newInnerGetter(t *Type, arr arrow.Array) getFunc {
	if t.textual() {
		a := arr.(*array.String)
		return func(i int) (any, error) { return fromText(t, a.Value(i)) }
	}
	switch t.Name {
	case "BOOLEAN":
		return just(arr.(*array.Boolean).Value)
	case "TINYINT":
		return just(arr.(*array.Int8).Value)
	case "SMALLINT":
		return just(arr.(*array.Int16).Value)
	case "INTEGER":
		return just(arr.(*array.Int32).Value)
	case "BIGINT":
		return just(arr.(*array.Int64).Value)
	case "UTINYINT":
		return just(arr.(*array.Uint8).Value)
	case "USMALLINT":
		return just(arr.(*array.Uint16).Value)
	case "UINTEGER":
		return just(arr.(*array.Uint32).Value)
	case "UBIGINT":
		return just(arr.(*array.Uint64).Value)
	case "FLOAT":
		return just(arr.(*array.Float32).Value)
	case "DOUBLE":
		return just(arr.(*array.Float64).Value)
	case "BLOB", "GEOMETRY":
		a := arr.(*array.Binary)
		return just(func(i int) []byte { return append([]byte{}, a.Value(i)...) })
	case "UUID":
		a := arr.(*array.FixedSizeBinary)
		return just(func(i int) []byte { return append([]byte{}, a.Value(i)...) })
	case "DATE":
		a := arr.(*array.Date32)
		return just(func(i int) time.Time {
			y, m, d := a.Value(i).ToTime().Date()
			return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		})
	case "TIME":
		a := arr.(*array.Time64)
		return just(func(i int) time.Time {
			u := time.UnixMicro(int64(a.Value(i))).UTC()
			return time.Date(1, time.January, 1, u.Hour(), u.Minute(), u.Second(), u.Nanosecond(), time.UTC)
		})
	case "TIMESTAMP", "TIMESTAMPTZ":
		a := arr.(*array.Timestamp)
		return just(func(i int) time.Time { return time.UnixMicro(int64(a.Value(i))).UTC() })
	case "TIMESTAMP_S":
		a := arr.(*array.Timestamp)
		return just(func(i int) time.Time { return time.Unix(int64(a.Value(i)), 0).UTC() })
	case "TIMESTAMP_MS":
		a := arr.(*array.Timestamp)
		return just(func(i int) time.Time { return time.UnixMilli(int64(a.Value(i))).UTC() })
	case "TIMESTAMP_NS":
		a := arr.(*array.Timestamp)
		return just(func(i int) time.Time { return time.Unix(0, int64(a.Value(i))).UTC() })
	case "INTERVAL":
		a := arr.(*array.MonthDayNanoInterval)
		return just(func(i int) duckdb.Interval {
			v := a.Value(i)
			return duckdb.Interval{Months: v.Months, Days: v.Days, Micros: v.Nanoseconds / 1000}
		})
	case "HUGEINT":
		a := arr.(*array.Decimal128)
		return just(func(i int) *big.Int { return bigOf(a.Value(i)) })
	case "DECIMAL":
		a := arr.(*array.Decimal128)
		return just(func(i int) duckdb.Decimal {
			n := a.Value(i)
			v := bigOf(n)
			if t.Width <= 18 { // the driver reads these from an int16/32/64
				v = big.NewInt(int64(n.LowBits()))
			}
			return duckdb.Decimal{Width: uint8(t.Width), Scale: uint8(t.Scale), Value: v}
		})
	case "LIST":
		a := arr.(*array.List)
		elem := newGetter(t.Elem, a.ListValues())
		return func(i int) (any, error) {
			lo, hi := a.ValueOffsets(i)
			return sliceOf(elem, int(lo), int(hi))
		}
	case "ARRAY":
		a := arr.(*array.FixedSizeList)
		elem := newGetter(t.Elem, a.ListValues())
		return func(i int) (any, error) {
			lo, hi := a.ValueOffsets(i)
			return sliceOf(elem, int(lo), int(hi))
		}
	case "STRUCT":
		a := arr.(*array.Struct)
		fields := make([]getFunc, len(t.Fields))
		for j, f := range t.Fields {
			fields[j] = newGetter(f.Type, a.Field(j))
		}
		return func(i int) (any, error) {
			m := make(map[string]any, len(fields))
			for j, f := range t.Fields {
				v, err := fields[j](i)
				if err != nil {
					return nil, err
				}
				m[f.Name] = v
			}
			return m, nil
		}
	case "MAP":
		a := arr.(*array.Map)
		key, item := newGetter(t.Key, a.Keys()), newGetter(t.Value, a.Items())
		return func(i int) (any, error) {
			lo, hi := a.ValueOffsets(i)
			m := duckdb.OrderedMap{}
			for j := int(lo); j < int(hi); j++ {
				k, err := key(j)
				if err != nil {
					return nil, err
				}
				v, err := item(j)
				if err != nil {
					return nil, err
				}
				m.Set(k, v)
			}
			return m, nil
		}
	case "SQLNULL":
		return func(int) (any, error) { return nil, nil }
	}
	panic(fmt.Sprintf("query: no getter for %s", t))
}

func sliceOf(elem getFunc, lo, hi int) ([]any, error) {
	out := make([]any, 0, hi-lo)
	for j := lo; j < hi; j++ {
		v, err := elem(j)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// recordRows appends the rows of rec to rows as the driver's Go values.
func recordRows(rows [][]any, rec arrow.RecordBatch, types []*Type) ([][]any, error) {
	n := int(rec.NumRows())
	get := make([]getFunc, len(types))
	for j := range types {
		get[j] = newGetter(types[j], rec.Column(j))
	}
	for i := range n {
		row := make([]any, len(types))
		for j := range get {
			v, err := get[j](i)
			if err != nil {
				return nil, fmt.Errorf("column %q: %w", rec.ColumnName(j), err)
			}
			row[j] = v
		}
		rows = append(rows, row)
	}
	return rows, nil
}
