package cmdhelp

import "flag"

// Interspersed parses the flags among args into fs and returns the other
// arguments, in order: package flag stops at the first argument that is
// not a flag, but `replay FILE --json` reads naturally. After "--" every
// argument is one of the others.
func Interspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--":
			return append(rest, args[1:]...), nil
		case len(a) > 1 && a[0] == '-':
			if err := fs.Parse(args); err != nil {
				return nil, err
			}
			left := fs.Args()
			if consumed := args[:len(args)-len(left)]; len(consumed) > 0 && consumed[len(consumed)-1] == "--" {
				return append(rest, left...), nil
			}
			args = left
		default:
			rest = append(rest, a)
			args = args[1:]
		}
	}
	return rest, nil
}
