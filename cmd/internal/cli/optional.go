package cli

import (
	"errors"
	"flag"
	"strconv"
	"time"
)

// Optional is an int, float, duration or string flag that knows whether
// it was given: an override that applies only then, or a default that
// another flag changes unless this one is given. Help shows it, and its
// errors read, as flag's own flag of that kind.
type Optional[T int | float64 | time.Duration | string] struct {
	V     T
	Given bool
}

func (o *Optional[T]) String() string {
	var v T
	if o != nil {
		v = o.V
	}
	switch x := any(v).(type) {
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case time.Duration:
		return x.String()
	default:
		return any(v).(string)
	}
}

// Set parses s as flag's flag of T's kind does.
func (o *Optional[T]) Set(s string) error {
	var v any
	var err error
	switch any(o.V).(type) {
	case int:
		var n int64
		n, err = strconv.ParseInt(s, 0, strconv.IntSize)
		v = int(n)
	case float64:
		v, err = strconv.ParseFloat(s, 64)
	case time.Duration:
		v, err = time.ParseDuration(s)
	default:
		v = s
	}
	switch {
	case errors.Is(err, strconv.ErrRange):
		return errors.New("value out of range")
	case err != nil:
		return errors.New("parse error")
	}
	o.V, o.Given = v.(T), true
	return nil
}

// declare declares a flag of o's kind named as f in fs, for help.
func (o *Optional[T]) declare(fs *flag.FlagSet, f *flag.Flag) {
	switch any(o.V).(type) {
	case int:
		fs.Int(f.Name, 0, f.Usage)
	case float64:
		fs.Float64(f.Name, 0, f.Usage)
	case time.Duration:
		fs.Duration(f.Name, 0, f.Usage)
	default:
		fs.String(f.Name, "", f.Usage)
	}
	fs.Lookup(f.Name).DefValue = f.DefValue
}

// declarer is a flag.Value that help shows as one of flag's own kinds.
type declarer interface {
	declare(fs *flag.FlagSet, f *flag.Flag)
}
