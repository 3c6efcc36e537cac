package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// checkSchema validates a JSON document against the subset of JSON Schema
// the embedded schemas use: type, enum, properties, required,
// additionalProperties (false or a schema), items, $ref to #/$defs, oneOf,
// minimum, maximum, minLength and pattern. It returns one message per
// violation, each with its JSON path.
func checkSchema(schema, doc []byte) ([]string, error) {
	var s map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("schema: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("document: %v", err)
	}
	c := &schemaChecker{root: s}
	c.check(s, v, "$")
	return c.errs, nil
}

type schemaChecker struct {
	root map[string]any
	errs []string
}

func (c *schemaChecker) fail(path, format string, args ...any) {
	c.errs = append(c.errs, path+": "+fmt.Sprintf(format, args...))
}

func (c *schemaChecker) check(s map[string]any, v any, path string) {
	if ref, ok := s["$ref"].(string); ok {
		name, found := strings.CutPrefix(ref, "#/$defs/")
		defs, _ := c.root["$defs"].(map[string]any)
		def, ok := defs[name].(map[string]any)
		if !found || !ok {
			c.fail(path, "unresolvable $ref %q", ref)
			return
		}
		c.check(def, v, path)
		return
	}
	if alts, ok := s["oneOf"].([]any); ok {
		matched := 0
		for _, a := range alts {
			sub := &schemaChecker{root: c.root}
			sub.check(a.(map[string]any), v, path)
			if len(sub.errs) == 0 {
				matched++
			}
		}
		if matched != 1 {
			c.fail(path, "matches %d of the oneOf alternatives; want exactly 1", matched)
		}
		return
	}
	if enum, ok := s["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			if fmt.Sprint(e) == fmt.Sprint(v) {
				found = true
			}
		}
		if !found {
			c.fail(path, "%v is not one of %v", v, enum)
		}
	}
	if t, ok := s["type"].(string); ok && !hasType(v, t) {
		c.fail(path, "want %s, have %T", t, v)
		return
	}
	switch v := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			if _, ok := v[r.(string)]; !ok {
				c.fail(path, "required field %q is missing", r)
			}
		}
		for k, val := range v {
			if ps, ok := props[k].(map[string]any); ok {
				c.check(ps, val, path+"."+k)
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					c.fail(path, "field %q is not in the schema", k)
				}
			case map[string]any:
				c.check(ap, val, path+"."+k)
			}
		}
	case []any:
		if items, ok := s["items"].(map[string]any); ok {
			for i, e := range v {
				c.check(items, e, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	case json.Number:
		f, _ := strconv.ParseFloat(string(v), 64)
		if m, ok := s["minimum"].(float64); ok && f < m {
			c.fail(path, "%v is below the minimum %v", v, m)
		}
		if m, ok := s["maximum"].(float64); ok && f > m {
			c.fail(path, "%v is above the maximum %v", v, m)
		}
	case string:
		if m, ok := s["minLength"].(float64); ok && float64(len(v)) < m {
			c.fail(path, "%q is shorter than %v", v, m)
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(v) {
			c.fail(path, "%q does not match %s", v, p)
		}
	}
}

func hasType(v any, t string) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		s := strings.TrimPrefix(string(n), "-")
		return s != "" && strings.Trim(s, "0123456789") == ""
	case "number":
		_, ok := v.(json.Number)
		return ok
	}
	return false
}
