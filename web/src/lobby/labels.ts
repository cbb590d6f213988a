// The bot levels a worker knows (bots/levels.py); the API does not list them.
export const BOT_LEVELS: [string, string][] = [
  ["random", "random moves"], ["heuristic", "beginner"], ["easy", "easy"], ["medium", "medium"], ["hard", "hard"],
  ["expert", "expert"],
];
export const DEFAULT_BOT = "medium";
