/**
 * Whether an ink view owns stderr right now. Anything else written to stderr meanwhile would
 * break its redrawing, so e.g. the Ctrl-C notice is left to the view's own final frame.
 */
export const liveView = { active: false };
