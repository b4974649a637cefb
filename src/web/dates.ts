/** "2024-05-01T09:30" in the browser's time zone, the value a datetime-local input takes and gives. */
export function localInput(d: Date) {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The browser's time zone, named beside every date-time the user types. */
export const timeZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;
