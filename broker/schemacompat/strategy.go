package schemacompat

import (
	"fmt"
	"strings"
)

// Strategy is a schema compatibility strategy, named as upstream's SchemaCompatibilityStrategy.
type Strategy string

// Upstream's strategies, in upstream's order.
const (
	Undefined          Strategy = "UNDEFINED"
	AlwaysIncompatible Strategy = "ALWAYS_INCOMPATIBLE"
	AlwaysCompatible   Strategy = "ALWAYS_COMPATIBLE"
	Backward           Strategy = "BACKWARD"
	Forward            Strategy = "FORWARD"
	Full               Strategy = "FULL"
	BackwardTransitive Strategy = "BACKWARD_TRANSITIVE"
	ForwardTransitive  Strategy = "FORWARD_TRANSITIVE"
	FullTransitive     Strategy = "FULL_TRANSITIVE"
)

// DefaultStrategy is what UNDEFINED means: upstream's broker setting schemaCompatibilityStrategy
// defaults to FULL.
const DefaultStrategy = Full

// Strategies lists every strategy, UNDEFINED first, as upstream's enum.
var Strategies = []Strategy{Undefined, AlwaysIncompatible, AlwaysCompatible, Backward, Forward,
	Full, BackwardTransitive, ForwardTransitive, FullTransitive}

// ParseStrategy reads a strategy name. Case and surrounding spaces do not matter (upstream's
// CLI upper-cases what it is given); the empty string is UNDEFINED.
func ParseStrategy(s string) (Strategy, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if t == "" {
		return Undefined, nil
	}
	for _, st := range Strategies {
		if string(st) == t {
			return st, nil
		}
	}
	return "", fmt.Errorf("%w %q", ErrInvalidStrategy, s)
}

// Valid reports whether s is one of upstream's strategy names.
func (s Strategy) Valid() bool {
	for _, st := range Strategies {
		if s == st {
			return true
		}
	}
	return false
}

// Transitive reports whether s checks against every existing schema, not only the latest.
func (s Strategy) Transitive() bool {
	return s == BackwardTransitive || s == ForwardTransitive || s == FullTransitive
}

// backward reports whether the candidate must read data written with existing schemas.
func (s Strategy) backward() bool {
	return s == Backward || s == BackwardTransitive || s == Full || s == FullTransitive
}

// forward reports whether existing schemas must read data written with the candidate.
func (s Strategy) forward() bool {
	return s == Forward || s == ForwardTransitive || s == Full || s == FullTransitive
}

// Effective returns the first defined strategy among levels (topic policy, namespace policy,
// broker setting — most specific first), or DefaultStrategy when none is. An empty Strategy
// counts as UNDEFINED.
func Effective(levels ...Strategy) Strategy {
	for _, l := range levels {
		if l != "" && l != Undefined {
			return l
		}
	}
	return DefaultStrategy
}
