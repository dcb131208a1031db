import type { CollectionSpec } from "reachkit";

/** One piece of feedback, as stored. */
export interface Feedback {
  id: string;
  companyId: string;
  /** E.164. */
  phone: string;
  /** 1 to 5. */
  rating: number;
  comment: string | null;
  status: "received" | "thanked";
  receivedAt: string;
  thankedAt: string | null;
}

export const FEEDBACK_COLLECTION = "feedback_entries";

/** Declared by the plugin; the storage adapter makes the table and its indexes at `kit.start()`. */
export const feedbackCollections: CollectionSpec[] = [
  {
    name: FEEDBACK_COLLECTION,
    indexes: [{ fields: ["companyId", "receivedAt"] }, { fields: ["companyId", "phone"] }],
  },
];

/** The job that thanks the customer, and what it is given. */
export const THANK_JOB = "feedback.thank";
export interface ThankJob {
  companyId: string;
  feedbackId: string;
}

/** What `feedback.thanked` carries. */
export interface FeedbackThanked {
  companyId: string;
  feedbackId: string;
  rating: number;
}
