package hatest

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// one is the single value of argument key ("" when not given).
func (c *Cmd) one(key string) string {
	v, _ := c.Arg(key)
	if len(v) != 1 {
		return ""
	}
	return v[0]
}

func (c *Cmd) duration(key string, def time.Duration) (time.Duration, error) {
	s := c.one(key)
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s=%s: want a non-negative duration such as 5ms", key, s)
	}
	return d, nil
}

func (c *Cmd) int(key string, def int) (int, error) {
	s := c.one(key)
	if s == "" {
		return def, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%s=%s: want a non-negative integer", key, s)
	}
	return v, nil
}

// filter builds the message filter of the command's from=, to=, kind=,
// type= and id= arguments.
func (c *Cmd) filter() (func(*envelope) bool, error) {
	from, to, kind, typ, id := c.one("from"), c.one("to"), c.one("kind"), c.one("type"), c.one("id")
	for _, a := range c.Args {
		switch a.Key {
		case "from", "to", "kind", "type", "id", "n":
		default:
			return nil, fmt.Errorf("unknown filter %q (from, to, kind, type, id, n)", a.Key)
		}
	}
	num := -1
	if id != "" {
		v, err := strconv.Atoi(strings.TrimPrefix(id, "#"))
		if err != nil {
			return nil, fmt.Errorf("id=%s: want a message number such as #3", id)
		}
		num = v
	}
	return func(env *envelope) bool {
		return (from == "" || env.from == from) && (to == "" || env.to == to) &&
			(kind == "" || env.m.Kind.String() == kind) && (typ == "" || env.m.Type == typ) &&
			(num < 0 || env.id == num)
	}, nil
}
