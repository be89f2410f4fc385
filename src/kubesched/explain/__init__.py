"""Explanations of scheduling decisions: why a pod is pending, why that node
(issue: explain every decision). ``ExplanationRecorder`` observes the scheduler;
``why_pending`` summarises one failed attempt; ``text`` renders them."""
