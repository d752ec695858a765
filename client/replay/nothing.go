package replay

// What a run that selected nothing is. A filter with a typo (property.regoin=eu) selects no
// letter and moves nothing; said as "moved 0 of 99000 … complete", it reads as success. The
// command line exits 3 for it and the history records it as ResultNothingSelected.

// ResultNothingSelected is the history's result of a run whose selection matched no letter.
const ResultNothingSelected = "nothing selected"

// Selected counts the letters the run's selection took: moved (in a dry run: would move or be
// discarded), discarded, failed, and those the loop guard held back.
func (s Summary) Selected() int64 { return s.Moved + s.WouldMove + s.Discarded + s.Failed + s.Guarded }

// NothingSelected reports that the run went through the whole DLQ as it was and its
// selection matched no letter. A resumed run is never said to select nothing: the run it
// continues did.
func (s Summary) NothingSelected() bool { return s.Complete && !s.Resumed && s.Selected() == 0 }
