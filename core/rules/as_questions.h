/* Questions about a product, answered only from measured data (spec 4.6). */
#ifndef AS_QUESTIONS_H
#define AS_QUESTIONS_H

#include <jansson.h>
#include <stdbool.h>

#include "as_catalog.h"
#include "as_mem.h"

/* Indexes into p->specs of the rows a question is about, best first (at most 3);
 * 0 when no specification matches. */
size_t as_question_match(as_mem *m, const as_product *p, const char *question, size_t *rows);

/* The answer object: answered (bool), text, basis ("measured" or "none"), rows
 * (the cited rows: spec, label, unit, claimed, measured, ok, detail), and the
 * measurement's measured_at, node and sample_size. Never a guess: a row that
 * was not measured is named as such, and a question no measured row answers is
 * said to be unanswerable. */
json_t *as_question_answer(as_mem *m, const as_product *p, const char *question);

#endif
