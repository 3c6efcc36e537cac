package jsontest

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// EscapeAll re-encodes a JSON document with every object key and string
// written as \u escapes (UTF-16 surrogate pairs beyond the basic plane),
// its numbers as written and its keys in their order: the same document
// to any JSON reader. It fails on a document encoding/json cannot read.
func EscapeAll(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out bytes.Buffer
	if err := value(dec, &out); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// value copies one value from dec to out.
func value(dec *json.Decoder, out *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch v := tok.(type) {
	case json.Delim:
		out.WriteRune(rune(v))
		for i := 0; dec.More(); i++ {
			if i > 0 {
				out.WriteByte(',')
			}
			if v == '{' {
				key, err := dec.Token()
				if err != nil {
					return err
				}
				str(out, key.(string))
				out.WriteByte(':')
			}
			if err := value(dec, out); err != nil {
				return err
			}
		}
		end, err := dec.Token()
		if err != nil {
			return err
		}
		out.WriteRune(rune(end.(json.Delim)))
	case string:
		str(out, v)
	case json.Number:
		out.WriteString(v.String())
	case bool:
		fmt.Fprint(out, v)
	case nil:
		out.WriteString("null")
	}
	return nil
}

// str writes s as a JSON string of \u escapes.
func str(out *bytes.Buffer, s string) {
	out.WriteByte('"')
	for _, r := range s {
		if r > 0xffff {
			r -= 0x10000
			fmt.Fprintf(out, `\u%04x\u%04x`, 0xd800+r>>10, 0xdc00+r&0x3ff)
			continue
		}
		fmt.Fprintf(out, `\u%04x`, r)
	}
	out.WriteByte('"')
}
