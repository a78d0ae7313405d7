package fence

import (
	"errors"
	"fmt"
	"strconv"
)

// Sentinel errors returned (wrapped) by Parse and Load; test with errors.Is.
var (
	// ErrNotFeatureCollection: the input is not JSON, or its top level is not
	// an object with "type": "FeatureCollection" and a "features" array.
	ErrNotFeatureCollection = errors.New("not a GeoJSON FeatureCollection")
	// ErrInvalidFeature: a feature is not an object with "type": "Feature",
	// its properties are not an object, or properties.name is not a string.
	ErrInvalidFeature = errors.New("invalid feature")
	// ErrMissingID: a feature has neither a top-level "id" nor properties.id.
	ErrMissingID = errors.New("missing id")
	// ErrInvalidID: the id has the wrong JSON type, the top-level id and
	// properties.id disagree, or the id is not a valid single MQTT topic level.
	ErrInvalidID = errors.New("invalid id")
	// ErrDuplicateID: two features share an id.
	ErrDuplicateID = errors.New("duplicate id")
	// ErrUnsupportedGeometry: the geometry is missing, null, or of a type other
	// than Polygon, MultiPolygon or Point-with-radius (a bare Point included).
	ErrUnsupportedGeometry = errors.New("unsupported geometry")
	// ErrInvalidCoordinates: coordinates have the wrong shape, a position has
	// fewer than two numbers, or a latitude/longitude is out of range.
	ErrInvalidCoordinates = errors.New("invalid coordinates")
	// ErrInvalidRing: a polygon has no rings, or a ring has fewer than 4
	// positions or is not closed (first position != last position).
	ErrInvalidRing = errors.New("invalid ring")
	// ErrInvalidRadius: properties.radius is not a number > 0 and at most
	// MaxRadius, or is given on a geometry other than Point.
	ErrInvalidRadius = errors.New("invalid radius")
	// ErrInvalidDwell: properties.dwell is not a number of seconds >= 0 that
	// fits a time.Duration.
	ErrInvalidDwell = errors.New("invalid dwell")
	// ErrInvalidAccuracy: properties.max_accuracy is not a number of
	// metres >= 0.
	ErrInvalidAccuracy = errors.New("invalid max_accuracy")
	// ErrInvalidMargin: properties.accuracy_margin is not a number >= 0
	// and at most MaxMargin.
	ErrInvalidMargin = errors.New("invalid accuracy_margin")
	// ErrInvalidConfirm: properties.confirm is not true or false.
	ErrInvalidConfirm = errors.New("invalid confirm")
)

// FeatureError reports why one feature of a fence file was rejected. Index is
// the feature's position in the "features" array; ID is empty when unknown.
// It unwraps to the cause, which wraps one of the sentinel errors above.
type FeatureError struct {
	Index int
	ID    string
	Err   error
}

// Error formats as `feature 3 (id "depot-7"): <problem>`.
func (e *FeatureError) Error() string {
	if e.ID == "" {
		return "feature " + strconv.Itoa(e.Index) + ": " + e.Err.Error()
	}
	return fmt.Sprintf("feature %d (id %q): %v", e.Index, e.ID, e.Err)
}

// Unwrap returns the cause so errors.Is/As see the sentinel.
func (e *FeatureError) Unwrap() error { return e.Err }

// detailError carries a sentinel for errors.Is while printing only the
// specific message, so FeatureError text stays short and readable.
type detailError struct {
	kind  error
	cause error // fmt.Errorf result; may itself wrap e.g. a *json.UnmarshalTypeError
}

func (e *detailError) Error() string   { return e.cause.Error() }
func (e *detailError) Unwrap() []error { return []error{e.kind, e.cause} }

// errf builds a detailError; format may use %w to keep a lower-level cause.
func errf(kind error, format string, args ...any) error {
	return &detailError{kind: kind, cause: fmt.Errorf(format, args...)}
}
