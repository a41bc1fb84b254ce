export { decideCheck } from './decide';
export { evolveCheck } from './evolve';
export { initialCheckState, type CheckEffect, type CheckState } from './model';
