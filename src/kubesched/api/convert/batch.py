"""The batch/v1 kinds: Job and CronJob, converted and validated (see
``kubesched.api.convert.workloads``): SetDefaults_Job, the selector and labels the
registry generates for a Job, ValidateJobSpec / ValidateCronJobSpec in
upstream's wording, and the status a dump carries.
"""

from __future__ import annotations

from dataclasses import replace

from kubesched.api.convert.meta import read_meta
from kubesched.api.convert.selectors import label_selector
from kubesched.api.convert.templates import (
    check_matches,
    enum_or,
    make_workload,
    nonnegative,
    opt_nonnegative,
    read_template,
    restart_policy,
)
from kubesched.api.convert.values import opt_time
from kubesched.api.cron import CronError, load_location, parse_standard
from kubesched.api.messages import child, fail, invalid, required
from kubesched.api.reader import (
    Raw,
    as_map,
    get_bool,
    get_list,
    get_map,
    get_str,
    get_str_map,
    opt_str,
)
from kubesched.api.workloads import (
    ALLOW,
    FAILED_ONLY,
    FORBID,
    INDEXED,
    JOB_COMPLETE,
    JOB_FAILED,
    NON_INDEXED,
    REPLACE,
    TERMINATING_OR_FAILED,
    CronJobDetails,
    JobDetails,
    Workload,
    job_labels,
)


def _job_spec(spec: Raw, path: str) -> JobDetails:
    """``JobSpec`` with SetDefaults_Job: both parallelism and completions unset means
    1 and 1; parallelism alone defaults to 1; backoffLimit 6."""
    parallelism = opt_nonnegative(spec, "parallelism", path)
    completions = opt_nonnegative(spec, "completions", path)
    if parallelism is None and completions is None:
        parallelism, completions = 1, 1
    mode = enum_or(spec, "completionMode", path, (NON_INDEXED, INDEXED), NON_INDEXED)
    if mode == INDEXED and completions is None:
        raise fail(child(path, "completions"), required("when completion mode is Indexed"))
    has_failure_policy = spec.get("podFailurePolicy") is not None
    replacement = enum_or(
        spec,
        "podReplacementPolicy",
        path,
        (TERMINATING_OR_FAILED, FAILED_ONLY),
        FAILED_ONLY if has_failure_policy else TERMINATING_OR_FAILED,
    )
    return JobDetails(
        parallelism=1 if parallelism is None else parallelism,
        completions=completions,
        backoff_limit=nonnegative(spec, "backoffLimit", path, 6),
        active_deadline_seconds=opt_nonnegative(spec, "activeDeadlineSeconds", path, bits=64),
        completion_mode=mode,
        suspend=get_bool(spec, "suspend", path),
        pod_replacement_policy=replacement,
        ttl_seconds_after_finished=opt_nonnegative(spec, "ttlSecondsAfterFinished", path),
    )


def _job_status(details: JobDetails, status: Raw) -> JobDetails:
    finished = ""
    for i, cond in enumerate(get_list(status, "conditions", "status")):
        c = as_map(cond, f"status.conditions[{i}]")
        ctype = get_str(c, "type", f"status.conditions[{i}]")
        if ctype in (JOB_COMPLETE, JOB_FAILED) and get_str(c, "status", "") == "True":
            finished = ctype
    uncounted = get_map(status, "uncountedTerminatedPods", "status")
    upath = "status.uncountedTerminatedPods"
    return replace(
        details,
        succeeded=nonnegative(status, "succeeded", "status")
        + len(get_list(uncounted, "succeeded", upath)),
        failed=nonnegative(status, "failed", "status") + len(get_list(uncounted, "failed", upath)),
        finished=finished,
        start_time=opt_time(status, "startTime", "status"),
        completed_indexes=_indexes(get_str(status, "completedIndexes", "status")),
    )


def _indexes(text: str) -> frozenset[int]:
    """``status.completedIndexes`` (``1,3-5``); unreadable parts are skipped."""
    out: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        if lo.isdigit() and (not hi or hi.isdigit()):
            out.update(range(int(lo), int(hi or lo) + 1))
    return frozenset(out)


def convert_job(raw: Raw) -> Workload:
    spec = get_map(raw, "spec", "")
    details = _job_status(_job_spec(spec, "spec"), get_map(raw, "status", ""))
    t = read_template(get_map(spec, "template", "spec"), "spec.template")
    restart_policy(t, "spec.template", ("OnFailure", "Never"))
    meta = read_meta(raw, namespaced=True)
    uid = meta.uid or f"job/{meta.namespace}/{meta.name}"
    selector = label_selector(spec.get("selector"), "spec.selector")
    labels = dict(t.labels)
    if get_bool(spec, "manualSelector", "spec"):
        if selector is None:
            raise fail("spec.selector", required())
    elif selector is None:
        labels, selector = job_labels(meta.name, uid, t.labels)
    check_matches(selector, labels, "spec.template.metadata.labels")
    return make_workload(
        "Job", raw, t, replicas=0, selector=selector, details=details, labels=labels
    )


def convert_cronjob(raw: Raw) -> Workload:
    spec = get_map(raw, "spec", "")
    text = get_str(spec, "schedule", "spec")
    if not text:
        raise fail("spec.schedule", required())
    tz = opt_str(spec, "timeZone", "spec")
    if tz is not None:
        if tz == "":
            raise fail("spec.timeZone", invalid(tz, "timeZone must be nil or non-empty string"))
        if tz.lower() == "local":
            raise fail(
                "spec.timeZone",
                invalid(
                    tz,
                    "timeZone must be an explicit time zone as defined in "
                    "https://www.iana.org/time-zones",
                ),
            )
        problem = load_location(tz)
        if problem is not None:
            raise fail("spec.timeZone", invalid(tz, problem))
    try:
        schedule = parse_standard(text, tz)
    except CronError as err:
        raise fail("spec.schedule", invalid(text, str(err))) from None
    if "TZ" in text:
        raise fail(
            "spec.schedule",
            invalid(text, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"),
        )
    job_template = get_map(spec, "jobTemplate", "spec")
    jmeta = get_map(job_template, "metadata", "spec.jobTemplate")
    jspec = get_map(job_template, "spec", "spec.jobTemplate")
    job = _job_spec(jspec, "spec.jobTemplate.spec")
    t = read_template(
        get_map(jspec, "template", "spec.jobTemplate.spec"), "spec.jobTemplate.spec.template"
    )
    restart_policy(t, "spec.jobTemplate.spec.template", ("OnFailure", "Never"))
    status = get_map(raw, "status", "")
    active = tuple(
        get_str(as_map(a, f"status.active[{i}]"), "name", f"status.active[{i}]")
        for i, a in enumerate(get_list(status, "active", "status"))
    )
    details = CronJobDetails(
        schedule=schedule,
        schedule_text=text,
        job=job,
        job_labels=get_str_map(jmeta, "labels", "spec.jobTemplate.metadata"),
        job_annotations=get_str_map(jmeta, "annotations", "spec.jobTemplate.metadata"),
        time_zone=tz,
        concurrency_policy=enum_or(
            spec, "concurrencyPolicy", "spec", (ALLOW, FORBID, REPLACE), ALLOW
        ),
        suspend=get_bool(spec, "suspend", "spec"),
        starting_deadline_seconds=opt_nonnegative(spec, "startingDeadlineSeconds", "spec", bits=64),
        successful_jobs_history_limit=nonnegative(spec, "successfulJobsHistoryLimit", "spec", 3),
        failed_jobs_history_limit=nonnegative(spec, "failedJobsHistoryLimit", "spec", 1),
        last_schedule_time=opt_time(status, "lastScheduleTime", "status"),
        active=active,
    )
    return make_workload("CronJob", raw, t, replicas=0, selector=None, details=details)
