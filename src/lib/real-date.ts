/**
 * One wording, everywhere chatlog says it (the read API, `chatlog export`, `chatlog import`), for a
 * day written in the right form that is not in the calendar: `2024-02-30`, `2024-13-01`.
 */
import { parseCalendarDay } from './calendar.js';

const DAY_SHAPE = /^\d{4}-\d{2}-\d{2}/;

/**
 * The leading `YYYY-MM-DD` of the text when it has that form but names no real day (so a message
 * can say so instead of repeating the form), else undefined.
 */
export function impossibleDay(text: string): string | undefined {
  const day = DAY_SHAPE.exec(text)?.[0];
  return day !== undefined && parseCalendarDay(day) === undefined ? day : undefined;
}

/** `from: 2024-02-30 is not a real date`: what was given, then the words every place uses. */
export function notARealDate(subject: string, day: string): string {
  return `${subject}: ${day} is not a real date`;
}

/**
 * What a `from`/`to` day that parseCalendarDay refused is told (the read API, `chatlog export`): that
 * it is not a real date when it has the form, else the form.
 */
export function badDayMessage(subject: string, text: string): string {
  return text.length === 10 && impossibleDay(text) !== undefined
    ? notARealDate(subject, text)
    : `${subject} must be a date in the form YYYY-MM-DD`;
}
