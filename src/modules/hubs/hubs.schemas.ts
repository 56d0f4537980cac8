/** The hub id as route schemas declare it (the same pattern isValidHubId checks). */
import { HUB_ID_PATTERN } from './hubs.usecases.js';

export const hubIdSchema = {
  type: 'string',
  pattern: HUB_ID_PATTERN.source,
  description: 'The HubSpot portal id, 1 to 20 digits.',
  examples: ['6662225'],
} as const;
