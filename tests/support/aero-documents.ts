/**
 * A small corpus for the score_group tests: nine pages on aerodynamics whose words are spread
 * unevenly, so each third of them (a shard) counts its own frequencies and lengths, and a shard's
 * own scores differ from those of the whole.
 */
import type { CorpusDocument } from "../../providers/corpus/corpus-adapter.ts";

export const doc = (id: number, title: string, text: string): CorpusDocument => ({
  title,
  locator: `https://x.example/${id}`,
  text,
});

export const AERO_DOCUMENTS: readonly CorpusDocument[] = [
  doc(0, "Supersonic flow", "shock waves in supersonic flow over a wedge"),
  doc(1, "Boundary layers", "the boundary layer of a flat plate in laminar flow"),
  doc(2, "Heat transfer", "heat transfer at hypersonic speeds near the stagnation point"),
  doc(3, "Wing theory", "lift and drag of a slender wing in supersonic aerodynamics"),
  doc(4, "Shock tubes", "shock tube experiments and the heat of shock waves"),
  doc(5, "Laminar flow", "transition of a laminar boundary layer to turbulent flow"),
  doc(6, "Panels", "flutter of panels in supersonic flow"),
  doc(7, "Cones", "pressure on cones at hypersonic speeds"),
  doc(8, "Plates", "skin friction of a flat plate and supersonic shock waves"),
];
