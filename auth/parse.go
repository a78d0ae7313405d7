package auth

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// rawUser is an entry of the users list as written.
type rawUser struct {
	Username string  `yaml:"username"`
	Password *string `yaml:"password"` // nil: certificate only
	Role     string  `yaml:"role"`
	ReadOwn  bool    `yaml:"read_own_transitions"`
}

// The keys a file and a user entry may have. Keys are checked by hand
// rather than with Decoder.KnownFields, whose errors name Go types, not
// users.
var (
	fileKeys = []string{"users", "limits"}
	userKeys = []string{"username", "password", "role", "read_own_transitions"}
)

// Parse parses a user file (see the package documentation). An error about
// one entry is a *UserError naming it.
func Parse(data []byte) (*File, error) {
	nodes, limitsNode, err := userNodes(data)
	if err != nil {
		return nil, err
	}
	limits, err := parseLimits(limitsNode)
	if err != nil {
		return nil, err
	}
	users := make([]User, 0, len(nodes))
	seen := make(map[string]int, len(nodes))
	for i, n := range nodes {
		u, err := parseUser(n)
		if err == nil {
			if j, dup := seen[u.Name]; dup {
				err = fmt.Errorf("%w: also user %d (line %d)", ErrDuplicateUser, j+1, nodes[j].Line)
			}
		}
		if err != nil {
			name := u.Name
			if name == "" {
				name = scalarValue(n, "username")
			}
			return nil, &UserError{Index: i + 1, Line: n.Line, Name: name, Err: err}
		}
		seen[u.Name] = i
		users = append(users, u)
	}
	f := newFile(users)
	f.limits = limits
	return f, nil
}

// userNodes returns the entries of the users list, with their lines, and
// the limits mapping (nil if none).
func userNodes(data []byte) ([]*yaml.Node, *yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil, nil, nil // an empty file: no users
	} else if err != nil {
		return nil, nil, err
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("line %d: a second YAML document: the file must be one", next.Line)
	}
	if len(doc.Content) == 0 {
		return nil, nil, nil // only comments
	}
	root := resolve(doc.Content[0])
	if isNull(root) {
		return nil, nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("line %d: the file must be a mapping with a users list", root.Line)
	}
	if err := checkKeys(root, fileKeys); err != nil {
		return nil, nil, err
	}
	// Decode rather than look the key up: it follows merge keys and
	// aliases. The entries stay nodes, for their lines.
	var top struct {
		Users  []yaml.Node `yaml:"users"`  // not *yaml.Node, which would be nil for a null entry
		Limits yaml.Node   `yaml:"limits"` // Kind 0 when absent
	}
	if err := root.Decode(&top); err != nil {
		return nil, nil, fmt.Errorf("users must be a list: %w", flatten(err))
	}
	nodes := make([]*yaml.Node, len(top.Users))
	for i := range top.Users {
		nodes[i] = &top.Users[i]
	}
	if top.Limits.Kind == 0 {
		return nodes, nil, nil
	}
	return nodes, &top.Limits, nil
}

// parseUser parses and validates one entry. The returned user's Name is
// set as soon as it is known, for the error.
func parseUser(n *yaml.Node) (User, error) {
	var raw rawUser
	m := resolve(n)
	if m.Kind != yaml.MappingNode {
		return User{}, errors.New("not a mapping of username, password, role")
	}
	if err := m.Decode(&raw); err != nil {
		return User{}, flatten(err)
	}
	u := User{Name: raw.Username, ReadOwn: raw.ReadOwn}
	if err := checkKeys(m, userKeys); err != nil {
		return u, err
	}
	if err := checkUsername(raw.Username); err != nil {
		return u, fmt.Errorf("%w: %w", ErrInvalidUsername, err)
	}
	if raw.Role == "" {
		return u, ErrMissingRole
	}
	var err error
	if u.Role, err = ParseRole(raw.Role); err != nil {
		return u, err
	}
	if u.Role == RoleDevice {
		if err := checkDeviceName(raw.Username); err != nil {
			return u, fmt.Errorf("%w: a device's username is its device id, a single MQTT topic level: %w", ErrInvalidUsername, err)
		}
	} else if raw.ReadOwn {
		return u, fmt.Errorf("%w, not %s", ErrReadOwnNotDevice, u.Role)
	}
	if raw.Password != nil {
		if u.hash, err = parseHash(*raw.Password); err != nil {
			return u, err
		}
		if m := u.hash.memKiB(); m > MaxArgon2Memory {
			return u, fmt.Errorf("%w: argon2id m=%d KiB is over the cap of %d KiB (%d MiB) a login may allocate here; "+
				"make a fitting hash with `edgefence passwd --algorithm argon2id` (m=%d)", ErrHashTooCostly, m, MaxArgon2Memory, MaxArgon2Memory>>10, argon2Default.memory)
		}
	}
	return u, nil
}

// checkKeys refuses keys of m not in known and keys given twice (which
// Decode also refuses, but not for the top level, walked by hand). It
// follows YAML merge keys ("<<"), whose mappings Decode merges in.
func checkKeys(m *yaml.Node, known []string) error {
	return checkKeysOnce(m, known, map[*yaml.Node]bool{})
}

// checkKeysOnce checks each mapping once, however many aliases lead to it:
// merge keys may nest and alias each other, so a hostile file could
// otherwise make the walk exponential or endless.
func checkKeysOnce(m *yaml.Node, known []string, seen map[*yaml.Node]bool) error {
	if seen[m] {
		return nil
	}
	seen[m] = true
	var keys []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			if err := checkMerged(v, known, seen); err != nil {
				return err
			}
			continue
		}
		if k.Kind != yaml.ScalarNode || !slices.Contains(known, k.Value) {
			return fmt.Errorf("line %d: %w %q (known: %s)", k.Line, ErrUnknownKey, k.Value, strings.Join(known, ", "))
		}
		if slices.Contains(keys, k.Value) {
			return fmt.Errorf("line %d: key %q given twice", k.Line, k.Value)
		}
		keys = append(keys, k.Value)
	}
	return nil
}

// checkMerged checks the keys of the value of a merge key: a mapping or a
// list of mappings.
func checkMerged(v *yaml.Node, known []string, seen map[*yaml.Node]bool) error {
	v = resolve(v)
	switch v.Kind {
	case yaml.MappingNode:
		return checkKeysOnce(v, known, seen)
	case yaml.SequenceNode:
		if seen[v] {
			return nil
		}
		seen[v] = true
		for _, e := range v.Content {
			if err := checkMerged(e, known, seen); err != nil {
				return err
			}
		}
	}
	return nil // Decode reports anything else
}

// resolve follows aliases (*name) to the node they stand for.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// value returns the value of key in mapping m, or nil.
func value(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return resolve(m.Content[i+1])
		}
	}
	return nil
}

// scalarValue returns the scalar value of key in the entry n, or "": the
// name of an entry too broken to decode.
func scalarValue(n *yaml.Node, key string) string {
	m := resolve(n)
	if m.Kind != yaml.MappingNode {
		return ""
	}
	if v := value(m, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// flatten puts yaml's multi-line list of decoding errors on one line, to
// follow the user it is about.
func flatten(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return errors.New(strings.Join(te.Errors, "; "))
	}
	return err
}
